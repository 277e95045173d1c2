package dev.hccl.it;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ranks started by Open MPI's {@code mpirun}, not by our launcher: each numbers itself from
 * {@code OMPI_COMM_WORLD_RANK} and {@code OMPI_COMM_WORLD_SIZE} (with {@code MASTER_ADDR}, {@code MASTER_PORT} and the
 * job token passed with {@code -x}), finds its local rank from the node, and checks every collective. Skipped where
 * {@code mpirun} is missing, unless {@code HCCL_TEST_MPIRUN=required} (set by .ci/run, which installs Open MPI).
 */
@Timeout(300)
class MpirunTest
{
    /** Set to {@code required} (as .ci/run does) to fail rather than skip where mpirun is missing. */
    static final String REQUIRED_ENV = "HCCL_TEST_MPIRUN";
    private static final int RANKS = 4;

    @TempDir
    Path outputs;

    @Test
    void ranksStartedByMpirunNumberThemselvesAndComputeRight() throws Exception
    {
        final String mpirun = onPath("mpirun");
        if (mpirun == null && !"required".equals(System.getenv(REQUIRED_ENV)))
        {
            Assumptions.abort("MpirunTest needs Open MPI's mpirun (Debian's openmpi-bin); set " + REQUIRED_ENV +
                "=required to make its absence a failure, as .ci/run does");
        }
        assertTrue(mpirun != null, "mpirun is not on PATH, and " + REQUIRED_ENV + "=required");
        final String token = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
        final List<String> command = new ArrayList<>(List.of(mpirun, "--allow-run-as-root", "--oversubscribe",
            "-np", Integer.toString(RANKS), "--output-filename", outputs.toString(), "-x", "MASTER_ADDR=127.0.0.1",
            "-x", "MASTER_PORT=" + TcpConformanceTest.freePort(), "-x", "HCCL_JOB_TOKEN=" + token,
            ProcessJob.JAVA, ProcessJob.QUICK_JIT, "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx256m",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
            LaunchIdentityWorker.class.getName(), "0", "1", "7", "1000"));
        final ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().keySet().removeIf(name -> name.startsWith("HCCL_") || name.startsWith("OMPI_") ||
            name.startsWith("PMI") || name.startsWith("SLURM_") || name.equals("RANK") || name.equals("WORLD_SIZE") ||
            name.startsWith("MASTER_") || name.startsWith("LOCAL_"));
        // To a file, so that the wait below is bounded (reading a pipe to its end waits for mpirun).
        final Path log = outputs.resolve("mpirun.log");
        pb.redirectOutput(log.toFile());
        final Process p = pb.start();
        try
        {
            assertTrue(p.waitFor(240, TimeUnit.SECONDS), () -> "mpirun did not end:\n" + SlurmTest.read(log));
        }
        finally
        {
            p.destroyForcibly();
        }
        final String all = SlurmTest.read(log);
        assertEquals(0, p.exitValue(), all);
        for (int r = 0; r < RANKS; r++)
        {
            // Each rank's stdout on its own (mpirun interleaves the ranks' output on its own stdout).
            final String out = rankOutput(r);
            LaunchIdentityWorker.assertNumberedAndPassed(out, r, RANKS, all);
        }
    }

    /** What rank {@code r} wrote to its stdout, which {@code --output-filename} keeps in a file of its own. */
    private String rankOutput(final int r) throws IOException
    {
        try (Stream<Path> files = Files.walk(outputs))
        {
            final List<Path> found = files.filter(f -> f.endsWith(Path.of("rank." + r, "stdout"))).toList();
            assertEquals(1, found.size(), "rank " + r + "'s output among " + outputs);
            return Files.readString(found.get(0));
        }
    }

    static String onPath(final String name)
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
        {
            final File f = new File(dir, name);
            if (f.canExecute())
            {
                return f.getPath();
            }
        }
        return null;
    }
}
