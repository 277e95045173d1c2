package dev.hccl.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class CommConfigTest
{
    @Test
    void explicitBeatsEnvironmentBeatsDefault()
    {
        final CommConfig config = CommConfig.builder()
            .environment(Map.of("RANK", "3", "WORLD_SIZE", "8", "MASTER_PORT", "1234", "HCCL_EXEC_TIMEOUT", "2.5"))
            .rank(5)
            .conclude();
        assertEquals(5, config.rank());
        assertEquals(8, config.worldSize());
        assertEquals(1234, config.masterPort());
        assertEquals(Duration.ofMillis(2500), config.execTimeout());
        assertEquals(CommConfig.CONNECT_TIMEOUT.defaultValue(), config.connectTimeout());
        assertEquals("127.0.0.1", config.masterAddr());
        assertEquals(CommConfig.DERIVE, config.localRank());
        assertNull(config.algo());
        assertEquals("5 (config)", config.describe().get("RANK"));
        assertEquals("8 (env WORLD_SIZE)", config.describe().get("WORLD_SIZE"));
        assertEquals("unset (default)", config.describe().get("HCCL_ALGO"));
    }

    @Test
    void schedulerVariablesServeWhenTorchrunsAreAbsentButNeverWin()
    {
        final CommConfig mpi = CommConfig.builder()
            .environment(Map.of("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4", "SLURM_PROCID", "9"))
            .conclude();
        assertEquals(2, mpi.rank());
        assertEquals(4, mpi.worldSize());
        final CommConfig torch = CommConfig.builder()
            .environment(Map.of("RANK", "1", "WORLD_SIZE", "2", "SLURM_PROCID", "9", "SLURM_NTASKS", "16"))
            .conclude();
        assertEquals(1, torch.rank());
        assertEquals(2, torch.worldSize());
    }

    /** Rank 2 of 4 as srun starts it, two tasks on each of two nodes, with nothing of torchrun's set. */
    @Test
    void srunsVariablesGiveRankZerosHostAndAPortOfTheJob()
    {
        final Map<String, String> srun = new HashMap<>(Map.of("SLURM_PROCID", "2", "SLURM_NTASKS", "4",
            "SLURM_NPROCS", "4", "SLURM_LOCALID", "0", "SLURM_NODEID", "1", "SLURM_JOB_ID", "1234567",
            "SLURM_JOBID", "1234567", "SLURM_STEP_ID", "0", "SLURM_JOB_NODELIST", "node[01-04,07]",
            "SLURM_NODELIST", "node[01-04,07]"));
        srun.putAll(Map.of("SLURM_STEP_NODELIST", "node[03-04]", "SLURM_TASKS_PER_NODE", "2(x2)",
            "SLURM_STEP_TASKS_PER_NODE", "2(x2)", "SLURM_NNODES", "5", "SLURMD_NODENAME", "node04",
            "SLURM_LAUNCH_NODE_IPADDR", "10.0.0.1"));
        final CommConfig config = CommConfig.builder().environment(srun).conclude();
        assertEquals(2, config.rank());
        assertEquals(4, config.worldSize());
        assertEquals(0, config.localRank());
        assertEquals("node03", config.masterAddr(), "the step's first node runs task 0");
        assertEquals(15000 + 4567, config.masterPort());
        assertEquals("node03 (env SLURM_STEP_NODELIST)", config.describe().get("MASTER_ADDR"));
        assertEquals("19567 (env SLURM_JOB_ID)", config.describe().get("MASTER_PORT"));

        srun.remove("SLURM_STEP_NODELIST");
        assertEquals("node01", CommConfig.builder().environment(srun).conclude().masterAddr(),
            "without a step (sbatch's environment), the job's first node");
        srun.putAll(Map.of("MASTER_ADDR", "head", "MASTER_PORT", "2000"));
        final CommConfig given = CommConfig.builder().environment(srun).conclude();
        assertEquals("head", given.masterAddr(), "the user's MASTER_ADDR wins");
        assertEquals(2000, given.masterPort());
        srun.remove("MASTER_ADDR");
        srun.put("SLURM_JOB_NODELIST", "node[01-");
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> CommConfig.builder().environment(srun).conclude().masterAddr());
        assertTrue(ex.getMessage().contains("SLURM_JOB_NODELIST: Slurm host list 'node[01-' is malformed") &&
            ex.getMessage().contains("set MASTER_ADDR"), ex.getMessage());
    }

    /** A pod of a Kubernetes Indexed Job (or JobSet) whose manifest sets WORLD_SIZE and rank 0's DNS name. */
    @Test
    void anIndexedJobsCompletionIndexIsTheRank()
    {
        final CommConfig pod = CommConfig.builder().environment(Map.of("JOB_COMPLETION_INDEX", "3", "WORLD_SIZE", "4",
            "MASTER_ADDR", "train-0.train", "MASTER_PORT", "29500", "HOSTNAME", "train-3")).conclude();
        assertEquals(3, pod.rank());
        assertEquals(4, pod.worldSize());
        assertEquals("train-0.train", pod.masterAddr());
        assertEquals("3 (env JOB_COMPLETION_INDEX)", pod.describe().get("RANK"));
        final CommConfig explicit = CommConfig.builder().environment(Map.of("JOB_COMPLETION_INDEX", "3", "RANK",
            "1", "WORLD_SIZE", "4")).conclude();
        assertEquals(1, explicit.rank(), "RANK, when the manifest sets it, wins");
        final CommConfig mpi = CommConfig.builder().environment(Map.of("JOB_COMPLETION_INDEX", "0",
            "OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "8")).conclude();
        assertEquals(2, mpi.rank(), "without WORLD_SIZE the index is not the rank: mpirun's is");
        assertEquals(8, mpi.worldSize());
    }

    /** srun --mpi=pmi2 sets PMI's pair, which is read first, beside Slurm's own. */
    @Test
    void srunThroughPmiGivesTheSameRendezvous()
    {
        final CommConfig pmi = CommConfig.builder().environment(Map.of("PMI_RANK", "2", "PMI_SIZE", "4",
            "SLURM_PROCID", "2", "SLURM_NTASKS", "4", "SLURM_STEP_NODELIST", "node[03-04]", "SLURM_JOB_ID",
            "1234567")).conclude();
        assertEquals(2, pmi.rank());
        assertEquals("node03", pmi.masterAddr());
        assertEquals(19567, pmi.masterPort());
    }

    @Test
    void otherLaunchersImplyNoRendezvous()
    {
        final CommConfig mpi = CommConfig.builder().environment(Map.of("OMPI_COMM_WORLD_RANK", "1",
            "OMPI_COMM_WORLD_SIZE", "2", "SLURM_JOB_NODELIST", "node[01-02]", "SLURM_JOB_ID", "77")).conclude();
        assertEquals("127.0.0.1", mpi.masterAddr(), "mpirun inside an allocation: rank 0 may be anywhere");
        assertEquals(29500, mpi.masterPort());
    }

    @Test
    void aLaunchersPairHalfSetNamesTheVariableMissing()
    {
        assertEnv("RANK is set (3) but WORLD_SIZE is not: set WORLD_SIZE too",
            Map.of("RANK", "3", "SLURM_NTASKS", "16"));
        assertEnv("WORLD_SIZE is set (4) but RANK is not: set RANK too", Map.of("WORLD_SIZE", "4"));
        assertEnv("OMPI_COMM_WORLD_RANK is set (1) but OMPI_COMM_WORLD_SIZE is not",
            Map.of("OMPI_COMM_WORLD_RANK", "1"));
        assertEnv("SLURM_NTASKS is set (2) but SLURM_PROCID is not", Map.of("SLURM_NTASKS", "2"));
        assertEnv("PMIX_RANK is set (0) but the launcher gives no world size: set WORLD_SIZE too",
            Map.of("PMIX_RANK", "0"));
        // What is missing may come from the builder.
        assertEquals(4, CommConfig.builder().environment(Map.of("RANK", "3")).worldSize(4).conclude().worldSize());
        assertEquals(2, CommConfig.builder().environment(Map.of("WORLD_SIZE", "4")).rank(2).conclude().rank());
    }

    @Test
    void aWorldOfOneNeedsNoRankAndIsGiven()
    {
        final CommConfig one = CommConfig.builder().environment(Map.of("WORLD_SIZE", "1")).conclude();
        assertEquals(0, one.rank());
        assertTrue(one.given(CommConfig.WORLD_SIZE));
        assertTrue(!one.given(CommConfig.RANK) && !one.given(CommConfig.MASTER_ADDR));
        final CommConfig none = CommConfig.builder().environment(Map.of()).conclude();
        assertTrue(!none.given(CommConfig.WORLD_SIZE), "the default world size is not given");
        assertTrue(CommConfig.builder().environment(Map.of("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2",
            "MASTER_ADDR", "10.0.0.1")).conclude().given(CommConfig.MASTER_ADDR));
        assertTrue(CommConfig.builder().environment(Map.of()).worldSize(1).conclude().given(CommConfig.WORLD_SIZE));
    }

    private static void assertEnv(final String expected, final Map<String, String> env)
    {
        final HcclException ex = assertThrows(HcclException.class,
            () -> CommConfig.builder().environment(env).conclude());
        assertEquals(ErrorCode.E_ENV, ex.errorCode());
        assertTrue(ex.getMessage().contains(expected), ex.getMessage());
    }

    @Test
    void invalidValuesNameTheSetting()
    {
        assertMessage("rank must be in [0, 2), got 2",
            () -> CommConfig.builder().environment(Map.of()).rank(2).worldSize(2).conclude());
        assertMessage("WORLD_SIZE must be an integer, got 'four'",
            () -> CommConfig.builder().environment(Map.of("WORLD_SIZE", "four")).conclude());
        assertMessage("HCCL_CONNECT_TIMEOUT must be a positive number of seconds",
            () -> CommConfig.builder().environment(Map.of("HCCL_CONNECT_TIMEOUT", "-1")).conclude());
        assertMessage("HCCL_DETERMINISTIC must be 1 or 0 (true or false), got 'yes'",
            () -> CommConfig.builder().environment(Map.of("HCCL_DETERMINISTIC", "yes")).conclude());
        assertMessage("HCCL_TOPO_PROBE must be auto, on (1, true) or off (0, false), got 'sometimes'",
            () -> CommConfig.builder().environment(Map.of("HCCL_TOPO_PROBE", "sometimes")).conclude());
        assertMessage("HCCL_SEGMENT_SIZE must be a multiple of 8 in [1 KiB, 64 MiB], got 1001",
            () -> CommConfig.builder().environment(Map.of()).segmentBytes(1001).conclude());
        assertMessage("MASTER_PORT must be in [0, 65535], got 70000",
            () -> CommConfig.builder().environment(Map.of("MASTER_PORT", "70000")).conclude());
    }

    @Test
    void topologyProbeIsOffUnlessSetAndReadsTheUsualSpellings()
    {
        assertEquals(TopoProbe.OFF, CommConfig.builder().environment(Map.of()).conclude().topoProbe());
        assertEquals(TopoProbe.AUTO,
            CommConfig.builder().environment(Map.of("HCCL_TOPO_PROBE", "Auto")).conclude().topoProbe());
        for (final String on : new String[] {"1", "on", "TRUE"})
        {
            assertEquals(TopoProbe.ON,
                CommConfig.builder().environment(Map.of("HCCL_TOPO_PROBE", on)).conclude().topoProbe());
        }
        for (final String off : new String[] {"0", "Off", "false"})
        {
            assertEquals(TopoProbe.OFF,
                CommConfig.builder().environment(Map.of("HCCL_TOPO_PROBE", off)).conclude().topoProbe());
        }
        assertEquals(TopoProbe.ON, CommConfig.builder().environment(Map.of("HCCL_TOPO_PROBE", "0"))
            .topoProbe(TopoProbe.ON).conclude().topoProbe(), "the builder wins over the environment");
    }

    private static void assertMessage(final String fragment, final org.junit.jupiter.api.function.Executable call)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, call);
        assertTrue(ex.getMessage().contains(fragment), ex.getMessage());
    }

    /**
     * The frame limit in bytes is a value of the builder like any other: it wins over HCCL_BUFFSIZE's MiB, is
     * described as HCCL_BUFFSIZE in bytes, and is kept by a configuration derived from this one.
     */
    @Test
    void aFrameLimitInBytesWinsOverBuffsizeAndIsKeptByDerivedConfigurations()
    {
        final Map<String, String> env = Map.of("HCCL_BUFFSIZE", "3");
        final CommConfig mib = CommConfig.builder().environment(env).conclude();
        assertEquals(3 << 20, mib.maxFrameBytes());
        assertEquals("3 (env HCCL_BUFFSIZE)", mib.describe().get("HCCL_BUFFSIZE"));
        final CommConfig bytes = CommConfig.builder().environment(env).maxFrameBytes(600_000).conclude();
        assertEquals(600_000, bytes.maxFrameBytes());
        assertEquals("600000 bytes (config)", bytes.describe().get("HCCL_BUFFSIZE"));
        final CommConfig derived = bytes.overriding(Map.of(CommConfig.RANK, 0)).launchedBy(1, "localhost", 0, 1);
        assertEquals(600_000, derived.maxFrameBytes());
        assertEquals("600000 bytes (config)", derived.describe().get("HCCL_BUFFSIZE"));
        final IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
            () -> CommConfig.builder().environment(env).maxFrameBytes(0).conclude());
        assertEquals("maxFrameBytes must be positive, got 0", none.getMessage());
        assertThrows(IllegalArgumentException.class,
            () -> CommConfig.builder().environment(env).maxFrameBytes(1000).conclude(), "below the segment size");
    }

    /**
     * A setting read as a richer type is read once per configuration, from whatever gave its base's value, and its
     * reading's refusal is the caller's error.
     */
    @Test
    void aSettingReadAsATypeIsReadOncePerConfigurationFromItsBasesValue()
    {
        final java.util.concurrent.atomic.AtomicInteger readings = new java.util.concurrent.atomic.AtomicInteger();
        final Setting<Integer> length = CommConfig.ALGO.readAs(text ->
        {
            readings.incrementAndGet();
            if ("bad".equals(text))
            {
                throw new IllegalArgumentException("HCCL_ALGO 'bad'");
            }
            return text == null ? -1 : text.length();
        });
        final CommConfig env = CommConfig.builder().environment(Map.of("HCCL_ALGO", "ring")).conclude();
        assertEquals(4, env.get(length));
        assertEquals(4, env.get(length));
        assertEquals(1, readings.get(), "read once");
        assertEquals(CommConfig.Source.ENVIRONMENT, env.source(length));
        final CommConfig built = CommConfig.builder().environment(Map.of("HCCL_ALGO", "ring")).algo("fullmesh")
            .conclude();
        assertEquals(8, built.get(length));
        assertEquals(CommConfig.Source.CONFIG, built.source(length));
        assertEquals(-1, CommConfig.builder().environment(Map.of()).conclude().get(length));
        assertEquals("fullmesh (config)", built.describe().get("HCCL_ALGO"), "described as its base");
        final CommConfig bad = CommConfig.builder().environment(Map.of()).algo("bad").conclude();
        assertEquals("HCCL_ALGO 'bad'", assertThrows(IllegalArgumentException.class, () -> bad.get(length))
            .getMessage());
    }
}
