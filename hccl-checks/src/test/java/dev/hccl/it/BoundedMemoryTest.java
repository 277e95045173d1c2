package dev.hccl.it;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13's flood, in real processes: 100 sends of 20 MiB to a rank that does not receive all "completed" within
 * seconds, and the receiver held 2.3 GB of heap and died of {@code OutOfMemoryError} under {@code -Xmx1g}. Now the
 * receiver, under {@code -Xmx256m}, holds at most its peers' eager budget, the sends wait for their receives, and
 * every element arrives right once the receives are posted.
 */
@Timeout(300)
class BoundedMemoryTest
{
    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"tcp", "shm"})
    void aRankThatDoesNotReceiveCostsItsPeersWaitingNotMemory(final String transport) throws Exception
    {
        try (ProcessJob job = ProcessJob.start(2, FloodWorker.class, "256m",
            Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_EXEC_TIMEOUT", "120")))
        {
            assertEquals(0, job.awaitExit(0, 240), job.outputs());
            assertEquals(0, job.awaitExit(1, 30), job.outputs());
            assertTrue(job.output(1).contains("SENDS-DONE 0\n"),
                "no 20 MiB send may complete before its receive is posted:\n" + job.outputs());
            final String heapLine = job.output(0).lines().filter(l -> l.startsWith("HEAP-USED-MIB ")).findFirst()
                .orElseThrow(() -> new AssertionError(job.outputs()));
            final long heapMib = Long.parseLong(heapLine.substring("HEAP-USED-MIB ".length()));
            assertTrue(heapMib < 64, "the receiver holds " + heapMib + " MiB of heap with 2 GB sent to it:\n" +
                job.outputs());
            assertTrue(job.output(0).contains("OK\n") && job.output(1).contains("OK\n"), job.outputs());
        }
    }
}
