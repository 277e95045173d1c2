package dev.hccl.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ranks started as another engine starts them: each a JVM of {@link LaunchIdentityWorker} on this test's class path
 * with exactly the engine's variables (this process's own launcher variables removed), then checked: every rank
 * numbered as expected, on one node, and passing SelfCheck.
 */
final class ForeignLaunch
{
    private ForeignLaunch()
    {
    }

    /**
     * @param envs each rank's variables, in rank order.
     * @throws Exception when a rank cannot start, fails, or is numbered wrongly.
     */
    static void runAndCheck(final List<Map<String, String>> envs) throws Exception
    {
        final List<Process> ranks = new ArrayList<>();
        try
        {
            for (final Map<String, String> env : envs)
            {
                ranks.add(start(env));
            }
            for (int r = 0; r < ranks.size(); r++)
            {
                final Process p = ranks.get(r);
                final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(p.waitFor(240, TimeUnit.SECONDS), "rank " + r + " did not end");
                assertEquals(0, p.exitValue(), "rank " + r + ":\n" + out);
                assertTrue(out.contains("IDENTITY rank=" + r + " size=" + envs.size() + " local=" + r + "/" +
                    envs.size() + "\n"), "rank " + r + " numbered wrongly:\n" + out);
                final String summary = "rank " + r + " of " + envs.size() + ": ";
                assertTrue(out.lines().anyMatch(l -> l.startsWith(summary) && l.endsWith(" passed, 0 failed")),
                    "no passing SelfCheck from rank " + r + ":\n" + out);
            }
        }
        finally
        {
            ranks.forEach(Process::destroyForcibly);
        }
    }

    private static Process start(final Map<String, String> env) throws IOException
    {
        final ProcessBuilder pb = new ProcessBuilder(ProcessJob.JAVA, ProcessJob.QUICK_JIT,
            "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx256m",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
            LaunchIdentityWorker.class.getName(), "0", "1", "7", "1000").redirectErrorStream(true);
        pb.environment().keySet().removeIf(name -> name.startsWith("HCCL_") || name.startsWith("OMPI_") ||
            name.startsWith("PMI") || name.startsWith("SLURM") || name.equals("RANK") || name.equals("WORLD_SIZE") ||
            name.startsWith("MASTER_") || name.startsWith("LOCAL_") || name.startsWith("RANK_") ||
            name.equals("JOB_COMPLETION_INDEX"));
        pb.environment().putAll(env);
        return pb.start();
    }
}
