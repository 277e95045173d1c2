package dev.hccl.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
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
        assertEquals(CommConfig.CONNECT_TIMEOUT_DEFAULT, config.connectTimeout());
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

    @Test
    void invalidValuesNameTheSetting()
    {
        assertMessage("rank must be in [0, 2), got 2",
            () -> CommConfig.builder().environment(Map.of()).rank(2).worldSize(2).conclude());
        assertMessage("WORLD_SIZE must be an integer, got 'four'",
            () -> CommConfig.builder().environment(Map.of("WORLD_SIZE", "four")).conclude());
        assertMessage("HCCL_CONNECT_TIMEOUT must be a positive number of seconds",
            () -> CommConfig.builder().environment(Map.of("HCCL_CONNECT_TIMEOUT", "-1")).conclude());
        assertMessage("HCCL_DETERMINISTIC must be true or false",
            () -> CommConfig.builder().environment(Map.of("HCCL_DETERMINISTIC", "yes")).conclude());
        assertMessage("HCCL_TOPO_PROBE must be auto, on (1, true) or off (0, false), got 'sometimes'",
            () -> CommConfig.builder().environment(Map.of("HCCL_TOPO_PROBE", "sometimes")).conclude());
        assertMessage("segmentBytes must be a multiple of 8",
            () -> CommConfig.builder().environment(Map.of()).segmentBytes(1001).conclude());
        assertMessage("masterPort must be in [0, 65535]",
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
}
