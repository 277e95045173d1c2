package dev.hccl.it;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ncclCommShrink: a rank killed mid-training, the survivors shrink the communicator to themselves and finish with the
 * right sums over the survivors, in real processes.
 */
@Timeout(240)
class ShrinkTest
{
    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"tcp", "shm"})
    void afterARankIsKilledTheSurvivorsShrinkAndFinishWithTheRightSums(final String transport) throws Exception
    {
        final int n = 4;
        final int victim = 2;
        try (ProcessJob job = ProcessJob.start(n, ShrinkWorker.class, "256m",
            Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_EXEC_TIMEOUT", "60")))
        {
            for (int r = 0; r < n; r++)
            {
                assertTrue(job.awaitLine(r, "READY", 120), job.outputs());
            }
            job.process(victim).destroyForcibly();
            for (int r = 0; r < n; r++)
            {
                if (r == victim)
                {
                    continue;
                }
                assertEquals(0, job.awaitExit(r, 120), job.outputs());
                final String out = job.output(r);
                assertTrue(out.contains("LOST [" + victim + "]"), "rank " + r + ":\n" + job.outputs());
                // Survivors 0, 1, 3 contribute 1, 2 and 4.
                assertTrue(out.contains("SHRUNK-OK sum=7.0 ranks=3"), "rank " + r + ":\n" + job.outputs());
            }
        }
    }
}
