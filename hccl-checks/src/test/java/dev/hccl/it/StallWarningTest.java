package dev.hccl.it;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Horovod's stall check: a rank that waits in an operation longer than {@code HCCL_STALL_CHECK_TIME} says so at WARN,
 * naming whom it waits for and the rank that is behind, and the operation still completes once that rank comes.
 */
@Timeout(120)
class StallWarningTest
{
    @Test
    void aLongWaitIsReportedWithTheRankThatIsBehindAndThenCompletes() throws Exception
    {
        try (ProcessJob job = ProcessJob.start(3, LateRankWorker.class, "256m",
            Map.of("HCCL_STALL_CHECK_TIME", "1", "HCCL_EXEC_TIMEOUT", "60"), "2", "4000"))
        {
            for (int r = 0; r < 3; r++)
            {
                assertEquals(0, job.awaitExit(r, 90), job.outputs());
                assertTrue(job.output(r).contains("OK"), job.outputs());
            }
            for (int r = 0; r < 2; r++)
            {
                final String out = job.output(r);
                assertTrue(out.contains("WARN") && out.contains("allReduce") && out.contains("has waited") &&
                    out.contains("rank 2 is behind: idle after collective #0"),
                    "rank " + r + " must warn that it waits and that rank 2 is behind:\n" + out);
            }
        }
    }
}
