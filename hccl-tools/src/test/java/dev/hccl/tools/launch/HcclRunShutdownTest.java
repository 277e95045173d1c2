package dev.hccl.tools.launch;

import static dev.hccl.tools.launch.Launches.awaitFiles;
import static dev.hccl.tools.launch.Launches.pid;
import static dev.hccl.tools.launch.Launches.running;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher's own termination: a launcher JVM (started from the test class path) gets SIGTERM
 * and must take its ranks with it, including one that ignores SIGTERM.
 */
class HcclRunShutdownTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(60)
    void sigtermToTheLauncherStopsAllRanks() throws Exception
    {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // Rank 1 ignores SIGTERM, so the launcher must escalate after the grace period.
        String script = "if [ $RANK = 1 ]; then trap '' TERM; fi; echo $HCCL_JOB_TOKEN_FILE > " + dir
                + "/tokenfile.$RANK; echo $$ > " + dir + "/pid.$RANK; echo up $RANK; exec sleep 60";
        ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                HcclRun.class.getName(), "-np", "2", "--grace-period", "1", "sh", "-c", script);
        // Given no token, the launcher makes one, and keeps it in a file of its own that it must remove.
        pb.environment().remove("HCCL_JOB_TOKEN");
        pb.redirectOutput(dir.resolve("out.txt").toFile()).redirectError(dir.resolve("err.txt").toFile());
        Process launcher = pb.start();
        try
        {
            awaitFiles(Duration.ofSeconds(20), dir.resolve("pid.0"), dir.resolve("pid.1"));
            long rank0 = pid(dir.resolve("pid.0"));
            long rank1 = pid(dir.resolve("pid.1"));
            assertTrue(running(rank0) && running(rank1), "ranks started");
            Path tokenFile = Path.of(Files.readString(dir.resolve("tokenfile.0")).strip());
            assertTrue(Files.isRegularFile(tokenFile), "the token file: " + tokenFile);

            long t0 = System.nanoTime();
            launcher.toHandle().destroy();  // SIGTERM
            assertTrue(launcher.waitFor(15, TimeUnit.SECONDS), "launcher did not exit");
            Duration took = Duration.ofNanos(System.nanoTime() - t0);

            assertEquals(128 + 15, launcher.exitValue(), Files.readString(dir.resolve("err.txt")));
            assertFalse(running(rank0), "rank 0 survived the launcher");
            assertFalse(running(rank1), "rank 1 (ignoring SIGTERM) survived the launcher");
            assertFalse(Files.exists(tokenFile), "the token file survived the launcher: " + tokenFile);
            assertFalse(Files.exists(tokenFile.getParent()), "its directory survived the launcher: " + tokenFile);
            assertTrue(took.compareTo(Duration.ofMillis(900)) >= 0, "rank 1 got its grace period: " + took);
            assertEquals(List.of("[0] up 0", "[1] up 1"),
                    Files.readAllLines(dir.resolve("out.txt"), StandardCharsets.UTF_8).stream().sorted().toList());
        }
        finally
        {
            launcher.destroyForcibly();
        }
    }
}
