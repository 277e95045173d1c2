package dev.hccl.it;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: a broadcast whose ranks disagree on the root succeeded on both "roots" and, as the last operation before
 * close(), was never reported. Now close() confirms the last operations with the peers, so every rank learns of it,
 * in real processes, over TCP and shared memory.
 */
@Timeout(180)
class LastOperationTest
{
    @ParameterizedTest(name = "{0} ranks, each its own root, over {1}")
    @CsvSource({"2, tcp", "3, shm", "3, tcp"})
    void aBroadcastRootDisagreementAsTheLastOperationIsReportedByEveryRank(final int n, final String transport)
        throws Exception
    {
        try (ProcessJob job = ProcessJob.start(n, RootDisagreementWorker.class, "256m",
            Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_EXEC_TIMEOUT", "30"), "self"))
        {
            for (int r = 0; r < n; r++)
            {
                assertEquals(0, job.awaitExit(r, 120), job.outputs());
                final String out = job.output(r);
                // Each rank hears of it: from the broadcast itself, or from close() when it came after.
                assertTrue(out.contains("CLOSE-FAILED") || out.contains("OP-FAILED"),
                    "rank " + r + " was never told:\n" + job.outputs());
                assertTrue(out.contains("E_MISMATCH") && out.contains("broadcast"),
                    "rank " + r + " must name the broadcast that differs:\n" + job.outputs());
            }
        }
    }
}
