package dev.hccl.it;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: with one rank of three stopped by SIGSTOP, nobody said anything for 5 minutes (the operation timeout is
 * 30 minutes, TCP keepalive the OS's 2 hours). Now the links' heartbeat names the frozen rank on every other rank
 * within the heartbeat timeout, whatever the operations do.
 */
@Timeout(300)
class FrozenRankTest
{
    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"tcp", "shm"})
    void aStoppedRankIsNamedByEveryOtherRankWithinTheHeartbeatTimeout(final String transport) throws Exception
    {
        final int n = 3;
        final int frozen = 1;
        try (ProcessJob job = ProcessJob.start(n, AllReduceLoopWorker.class, "256m",
            Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_HEARTBEAT_TIMEOUT", "3")))
        {
            for (int r = 0; r < n; r++)
            {
                assertTrue(job.awaitLine(r, "READY", 120), job.outputs());
            }
            final long stoppedAt = System.nanoTime();
            assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(job.process(frozen).pid())).start()
                .waitFor(), "kill -STOP");
            for (int r = 0; r < n; r++)
            {
                if (r == frozen)
                {
                    continue;
                }
                assertEquals(3, job.awaitExit(r, 60), job.outputs());
                final double seconds = (System.nanoTime() - stoppedAt) / 1e9;
                final String output = job.output(r);
                assertTrue(output.contains("FAILED") && output.contains("rank " + frozen) &&
                    (output.contains("no word from rank " + frozen) || output.contains("heartbeat in shared memory")),
                    "rank " + r + " must name the frozen rank " + frozen + ":\n" + output);
                assertTrue(seconds < 20, "rank " + r + " took " + seconds + " s to name the frozen rank");
            }
        }
    }
}
