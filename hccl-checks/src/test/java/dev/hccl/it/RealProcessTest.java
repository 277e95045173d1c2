package dev.hccl.it;

import dev.hccl.bench.check.SelfCheck;
import dev.hccl.tools.launch.HcclRun;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Separate JVM processes over real TCP on loopback, started as users start them: through the launcher for the
 * collective checks, by hand for the kill test (the launcher would stop the survivors we want to watch).
 */
@Timeout(300)
class RealProcessTest
{
    private static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    private static final String CLASS_PATH = System.getProperty("java.class.path");
    private static final String OPENS = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED";

    /** Each test's own segment directory in /dev/shm, so that what a job leaves behind can be seen. */
    private Path shmDir;

    @BeforeEach
    void makeShmDir() throws IOException
    {
        shmDir = Files.createTempDirectory(shmParent(), "hccl-test-");
    }

    @AfterEach
    void removeShmDir() throws IOException
    {
        removeDirectory(shmDir);
    }

    /**
     * Removes a test's directory and the files in it.
     *
     * @param dir the directory.
     * @throws IOException when one cannot be removed.
     */
    static void removeDirectory(final Path dir) throws IOException
    {
        try (Stream<Path> files = Files.list(dir))
        {
            for (final Path f : files.toList())
            {
                Files.delete(f);
            }
        }
        Files.delete(dir);
    }

    /**
     * SelfCheck's every operation, type, reduction and count, in and out of place, across processes of one node: over
     * shared memory, chosen without being asked (1 to 8 ranks; more ranks than this machine's cores among them), and
     * over TCP with {@code HCCL_SHM_DISABLE=1}, with one connection per pair and with four on two I/O threads
     * ({@code HCCL_SOCKET_NSOCKS=2 HCCL_SOCKET_NTHREADS=2}). No segment is left in the directory afterwards.
     */
    @ParameterizedTest(name = "np={0} over {1} with {2} connection(s) per pair")
    @CsvSource({"1, none, 1", "2, shm, 1", "3, shm, 1", "4, shm, 1", "5, shm, 1", "8, shm, 1", "2, tcp, 1",
        "3, tcp, 1", "3, tcp, 4"})
    void everyCollectiveIsRightAcrossProcessesStartedByTheLauncher(
        final int n, final String transport, final int connections) throws Exception
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final String[] counts = n > 4 ? new String[]{"0", "1", "7", "1000"} : new String[]{"0", "1", "7", "1000", "65537"};
        final List<String> command = new ArrayList<>(List.of("-np", Integer.toString(n), "--", "env",
            "HCCL_SHM_DIR=" + shmDir, "HCCL_SHM_DISABLE=" + ("tcp".equals(transport) ? "1" : "0"),
            "HCCL_SOCKET_NSOCKS=" + (connections / 2 > 0 ? connections / 2 : 1),
            "HCCL_SOCKET_NTHREADS=" + (connections > 1 ? 2 : 1), "HCCL_IO_THREADS=" + (connections > 1 ? 2 : 0),
            JAVA, ProcessJob.QUICK_JIT, "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-Dorg.slf4j.simpleLogger.log.dev.hccl.transport.netty.NettyTransport=debug",
            "-cp", CLASS_PATH, SelfCheck.class.getName()));
        command.addAll(List.of(counts));
        final int status = HcclRun.run(command.toArray(new String[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        final String stdout = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, () -> "stdout:\n" + stdout + "\nstderr:\n" + err.toString(StandardCharsets.UTF_8));
        for (int r = 0; r < n; r++)
        {
            final String prefix = "[" + r + "] rank " + r + " of " + n + ": ";
            assertTrue(stdout.lines().anyMatch(l -> l.startsWith(prefix) && l.contains(" over " + transport + " ") &&
                l.endsWith(" passed, 0 failed")), "no passing summary over " + transport + " from rank " + r +
                " in:\n" + stdout);
        }
        assertTrue(!stdout.contains("WRONG"), stdout);
        if (connections > 1)
        {
            final String stderr = err.toString(StandardCharsets.UTF_8);
            assertEquals(n, stderr.lines().filter(l -> l.contains(", " + connections + " connections each on 2 threads"))
                .count(), stderr);
        }
        assertEquals(List.of(), leftIn(shmDir), "segments left behind");
    }

    /** The files in a directory. */
    static List<String> leftIn(final Path dir) throws IOException
    {
        try (Stream<Path> files = Files.list(dir))
        {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    /** A temporary directory in /dev/shm, the tmpfs the segments live in, where there is one. */
    static Path shmParent()
    {
        final Path devShm = Paths.get("/dev/shm");
        return Files.isDirectory(devShm) ? devShm : Paths.get(System.getProperty("java.io.tmpdir"));
    }

    @Test
    void withoutTheAddOpensFlagInitFailsNamingTheFlag() throws Exception
    {
        final ProcessBuilder pb = new ProcessBuilder(JAVA, ProcessJob.QUICK_JIT, "-cp", CLASS_PATH,
            "dev.hccl.examples.AllReduceExample").redirectErrorStream(true);
        pb.environment().remove("JDK_JAVA_OPTIONS");
        pb.environment().put("WORLD_SIZE", "1");
        final Process p = pb.start();
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertTrue(p.exitValue() != 0, output);
        assertTrue(output.contains("E_ENV") &&
            output.contains("--add-opens java.base/jdk.internal.misc=ALL-UNNAMED"), output);
    }

    /** The example, started by hand with {@code env} on top of an environment without any launcher's variables. */
    private static Process startExample(final Map<String, String> env) throws java.io.IOException
    {
        final ProcessBuilder pb = new ProcessBuilder(JAVA, ProcessJob.QUICK_JIT, OPENS, "-Xmx256m", "-cp", CLASS_PATH,
            "dev.hccl.examples.AllReduceExample").redirectErrorStream(true);
        pb.environment().keySet().removeIf(name -> name.equals("RANK") || name.equals("WORLD_SIZE") ||
            name.startsWith("OMPI_") || name.startsWith("PMI_") || name.startsWith("PMIX_") ||
            name.startsWith("SLURM_") || name.startsWith("MASTER_") || name.startsWith("HCCL_"));
        pb.environment().putAll(env);
        return pb.start();
    }

    private static String finish(final Process p) throws Exception
    {
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), output);
        return output;
    }

    @Test
    void processesStartedWithoutALauncherRefuseInsteadOfEachRunningAlone() throws Exception
    {
        // Two trainings that each "succeed" as rank 0 of 1 is the failure torch.distributed's env:// refuses too.
        final List<Process> processes = List.of(startExample(Map.of()), startExample(Map.of()));
        for (final Process p : processes)
        {
            final String output = finish(p);
            assertTrue(p.exitValue() != 0, output);
            assertTrue(output.contains("E_ENV") && output.contains("RANK/WORLD_SIZE") &&
                output.contains("OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE") && output.contains("WORLD_SIZE=1"),
                output);
        }
        final String half = finish(startExample(Map.of("RANK", "1")));
        assertTrue(half.contains("E_ENV") && half.contains("RANK is set (1) but WORLD_SIZE is not"), half);
        final Process single = startExample(Map.of("WORLD_SIZE", "1"));
        final String output = finish(single);
        assertEquals(0, single.exitValue(), output);
        assertTrue(output.contains("rank 0 of 1") && output.contains(": OK"), output);
    }

    @Test
    void ranksWaitingForAMissingRankSayWhoIsMissingAndHowLongIsLeft() throws Exception
    {
        // WORLD_SIZE=3 with two processes started: reports every 2 s before the 8 s timeout ends it (the later ones
        // count both, even if one JVM started seconds after the other), and a warning that the store's address is
        // the default one, on both ranks.
        final int port = TcpConformanceTest.freePort();
        final List<Process> processes = new ArrayList<>();
        for (int r = 0; r < 2; r++)
        {
            processes.add(startExample(Map.of("RANK", Integer.toString(r), "WORLD_SIZE", "3", "MASTER_PORT",
                Integer.toString(port), "HCCL_CONNECT_TIMEOUT", "8")));
        }
        for (int r = 0; r < 2; r++)
        {
            final String output = finish(processes.get(r));
            assertTrue(processes.get(r).exitValue() != 0, output);
            assertTrue(output.contains("rank " + r + ": 2 of 3 ranks arrived; waiting for rank [2]; ") &&
                output.contains(" s left of HCCL_CONNECT_TIMEOUT"), output);
            assertTrue(output.contains("WARN") && output.contains("MASTER_ADDR is not set"), output);
            assertTrue(output.contains("rank [2] of 3 did not arrive"), output);
        }
    }

    /**
     * A rank killed with SIGKILL in the middle of all-reducing 4 MiB: every survivor fails within seconds naming it,
     * over shared memory (where no socket closes: the peer's liveness is watched) as over TCP, with the transport's
     * report as its exception's cause; nothing of the job is left in the segment directory.
     */
    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"shm", "tcp"})
    void aKilledRankMakesEveryOtherRankFailNamingItWithinSeconds(final String transport) throws Exception
    {
        final int n = 4;
        final int victim = 2;
        try (ProcessJob job = ProcessJob.start(n, AllReduceLoopWorker.class, "256m", Map.of(
            "HCCL_EXEC_TIMEOUT", "120", // detection must come from the dead link
            "HCCL_SHM_DIR", shmDir.toString(), "HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0")))
        {
            for (int r = 0; r < n; r++)
            {
                assertTrue(job.awaitLine(r, "READY", 120), () -> "ranks never became ready: " + job.outputs());
            }
            final long killedAt = System.nanoTime();
            job.process(victim).destroyForcibly();
            for (int r = 0; r < n; r++)
            {
                if (r == victim)
                {
                    continue;
                }
                assertEquals(3, job.awaitExit(r, 20), "rank " + r + " output:\n" + job.output(r));
                final double seconds = (System.nanoTime() - killedAt) / 1e9;
                final String output = job.output(r);
                assertTrue(seconds < 10, "rank " + r + " took " + seconds + " s to fail");
                assertTrue(output.contains("FAILED") && output.contains("rank " + victim) &&
                    output.contains("allReduce"), "rank " + r + " must name rank " + victim + " and the operation:\n" +
                    output);
                assertTrue(output.contains("CAUSE dev.hccl.api.HcclException"),
                    "rank " + r + "'s exception must carry the transport's report as its cause:\n" + output);
            }
            assertEquals(List.of(), leftIn(shmDir), "segments left behind");
        }
    }
}
