package dev.hccl.it;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ranks started by a real Slurm's {@code srun}, on a single-node Slurm that {@code tools/slurm-single-node.sh} starts
 * for the test: nothing but Slurm's own variables numbers them, and rank 0's host and port are derived from
 * {@code SLURM_STEP_NODELIST} and {@code SLURM_JOB_ID} (no {@code MASTER_ADDR}, no {@code MASTER_PORT}). Each checks
 * its rank, local rank and every collective. Skipped without root or Slurm, unless {@code HCCL_TEST_SLURM=required}
 * (set by .ci/run, which installs Debian's slurm-wlm and munge).
 */
@Timeout(300)
class SlurmTest
{
    /** Set to {@code required} (as .ci/run does) to fail rather than skip where Slurm or root is missing. */
    static final String REQUIRED_ENV = "HCCL_TEST_SLURM";
    private static final int RANKS = 3;
    private static final Path SCRIPT = Path.of("..", "tools", "slurm-single-node.sh");
    /** The configuration line of a rank whose rendezvous came from Slurm's variables alone. */
    private static final Pattern DERIVED = Pattern.compile(
        "MASTER_ADDR=\\S+ \\(env SLURM_STEP_NODELIST\\), MASTER_PORT=1\\d{4} \\(env SLURM_JOB_ID\\)");

    @TempDir
    Path work;

    @Test
    void ranksStartedBySrunFindRankZeroAndComputeRight() throws Exception
    {
        final String srun = MpirunTest.onPath("srun");
        final boolean root = "root".equals(System.getProperty("user.name"));
        final boolean daemons = Files.isExecutable(Path.of("/usr/sbin/slurmctld")) &&
            Files.isExecutable(Path.of("/usr/sbin/slurmd"));
        if ((srun == null || !root || !daemons) && !"required".equals(System.getenv(REQUIRED_ENV)))
        {
            Assumptions.abort("SlurmTest needs root and Slurm (Debian's slurm-wlm and munge); set " + REQUIRED_ENV +
                "=required to make their absence a failure, as .ci/run does");
        }
        assertTrue(srun != null && root && daemons, "srun, slurmctld or slurmd missing, or not root, and " +
            REQUIRED_ENV + "=required");
        // The script's own directory, which .ci/run's exit trap also stops.
        final Path dir = Path.of("/tmp/hccl-slurm");
        final String up = script("up", dir);
        try
        {
            final String token = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
            final ProcessBuilder pb = new ProcessBuilder(srun, "-n", Integer.toString(RANKS), "--overcommit",
                "--kill-on-bad-exit=1", "--output=" + work.resolve("rank.%t.out"),
                ProcessJob.JAVA, ProcessJob.QUICK_JIT, "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
                "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                // Its configuration line (DEBUG) says where MASTER_ADDR and MASTER_PORT came from.
                "-Dorg.slf4j.simpleLogger.log.dev.hccl.core.HcclProvider=debug",
                "-cp", System.getProperty("java.class.path"),
                LaunchIdentityWorker.class.getName(), "0", "1", "7", "1000").redirectErrorStream(true);
            pb.environment().keySet().removeIf(name -> name.startsWith("HCCL_") || name.startsWith("OMPI_") ||
                name.startsWith("PMI") || name.startsWith("SLURM_") || name.equals("RANK") ||
                name.equals("WORLD_SIZE") || name.startsWith("MASTER_") || name.startsWith("LOCAL_"));
            pb.environment().put("SLURM_CONF", dir.resolve("slurm.conf").toString());
            pb.environment().put("HCCL_JOB_TOKEN", token);
            // To a file, so that the wait below is bounded (reading a pipe to its end waits for srun).
            final Path log = work.resolve("srun.log");
            pb.redirectOutput(log.toFile());
            final Process p = pb.start();
            try
            {
                assertTrue(p.waitFor(240, TimeUnit.SECONDS), () -> "srun did not end:\n" + read(log));
            }
            finally
            {
                p.destroyForcibly();
            }
            final String all = read(log);
            assertEquals(0, p.exitValue(), "srun:\n" + all + "\n" + up);
            for (int r = 0; r < RANKS; r++)
            {
                final String out = Files.readString(work.resolve("rank." + r + ".out"));
                LaunchIdentityWorker.assertNumberedAndPassed(out, r, RANKS, all);
                assertTrue(DERIVED.matcher(out).find(), "rank " + r + " did not derive rank 0's address from " +
                    "Slurm's variables:\n" + out);
            }
        }
        finally
        {
            script("down", dir);
        }
    }

    /** A launcher's log, as far as it was written. */
    static String read(final Path log)
    {
        try
        {
            return Files.readString(log);
        }
        catch (final java.io.IOException e)
        {
            return "(no log: " + e + ")";
        }
    }

    /** Runs the script; fails with its output when it fails. */
    private static String script(final String action, final Path dir) throws Exception
    {
        final Process p = new ProcessBuilder("bash", SCRIPT.toString(), action, dir.toString())
            .redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), SCRIPT + " " + action + " did not end");
        assertEquals(0, p.exitValue(), SCRIPT + " " + action + ":\n" + out);
        return out;
    }
}
