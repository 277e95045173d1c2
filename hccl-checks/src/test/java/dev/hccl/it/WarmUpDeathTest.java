package dev.hccl.it;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rank killed (SIGKILL) or frozen (SIGSTOP) while {@code Hccl.init} warms up (a minute of it here,
 * {@code HCCL_WARMUP_MS}): the others' init fails within seconds, naming that rank and the warm-up, instead of warming
 * up against a dead or silent peer until {@code HCCL_EXEC_TIMEOUT}. Real processes, shared memory and TCP.
 */
@Timeout(300)
class WarmUpDeathTest
{
    @ParameterizedTest(name = "over {0}, SIG{1}")
    @CsvSource({"shm,KILL", "tcp,KILL", "shm,STOP", "tcp,STOP"})
    void aRankKilledOrFrozenDuringTheWarmUpFailsTheOthersInitNamingIt(final String transport, final String signal)
        throws Exception
    {
        final int n = 3;
        final int killed = 1;
        try (ProcessJob job = ProcessJob.start(n, AllReduceLoopWorker.class, "256m",
            Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_WARMUP_MS", "60000",
                "HCCL_HEARTBEAT_TIMEOUT", "3",
                // Rank 0 logs its algorithms as it makes the communicator, just before the warm-up starts.
                "JAVA_TOOL_OPTIONS", "-Dorg.slf4j.simpleLogger.log.dev.hccl.core.CommunicatorImpl=debug")))
        {
            assertTrue(job.awaitLine(0, "DEBUG dev.hccl.core.CommunicatorImpl", 120), job.outputs());
            Thread.sleep(2000); // well inside the minute of warm-up
            final long killedAt = System.nanoTime();
            assertEquals(0, new ProcessBuilder("kill", "-" + signal, Long.toString(job.process(killed).pid())).start()
                .waitFor(), "kill -" + signal);
            for (int r = 0; r < n; r++)
            {
                if (r == killed)
                {
                    continue;
                }
                assertEquals(3, job.awaitExit(r, 60), job.outputs());
                final double seconds = (System.nanoTime() - killedAt) / 1e9;
                final String output = job.output(r);
                assertTrue(output.contains("FAILED") && output.contains("warm-up (HCCL_WARMUP_MS) failed") &&
                    output.contains("rank " + killed), "rank " + r + " must name the warm-up and rank " + killed +
                    ":\n" + output);
                assertFalse(output.contains("READY"), "rank " + r + " finished init:\n" + output);
                assertTrue(seconds < 30, "rank " + r + " took " + seconds + " s to fail");
            }
        }
    }
}
