package dev.hccl.it;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GradientSync in real processes, over TCP and over shared memory: three ranks, three steps of a model with
 * zero-length gradients, one larger than the bucket cap and two thousand tiny ones, marked ready from two threads in
 * each rank's own order. Every result is checked against the mean on each rank, and the last result's bits agree on
 * every rank; ranks built with different compressions all fail, naming both.
 */
@Timeout(300)
class GradientSyncProcessTest
{
    private static final int RANKS = 3;

    private static Map<String, String> over(final String transport)
    {
        return Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_EXEC_TIMEOUT", "60");
    }

    @ParameterizedTest(name = "{1} {2} over {0}")
    @CsvSource({
        "tcp, none, fused", "tcp, none, views", "shm, none, fused", "shm, none, views",
        "tcp, fp16, views", "shm, bf16, fused", "tcp, topk:0.05, fused", "shm, topk:0.05, views"})
    void everyRankHoldsTheSameReducedGradients(final String transport, final String compression, final String mode)
        throws Exception
    {
        try (ProcessJob job = ProcessJob.start(RANKS, GradientSyncWorker.class, "512m", over(transport),
            compression, mode))
        {
            String result = null;
            for (int r = 0; r < RANKS; r++)
            {
                assertEquals(0, job.awaitExit(r, 120), job.outputs());
                assertTrue(job.output(r).contains("STEP 2 OK"), job.outputs());
                final String line = job.output(r).lines().filter(l -> l.startsWith("RESULT ")).findFirst()
                    .orElseThrow(() -> new AssertionError(job.outputs()));
                if (result == null)
                {
                    result = line;
                }
                assertEquals(result, line, "rank " + r + " holds other bits than rank 0:\n" + job.outputs());
            }
        }
    }

    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"tcp", "shm"})
    void ranksThatDisagreeOnCompressionAllFailNamingBoth(final String transport) throws Exception
    {
        try (ProcessJob job = ProcessJob.start(RANKS, GradientSyncWorker.class, "256m", over(transport),
            "none", "fused", "1"))
        {
            for (int r = 0; r < RANKS; r++)
            {
                assertEquals(3, job.awaitExit(r, 120), job.outputs());
                assertTrue(job.output(r).contains("REFUSED E_MISMATCH: GradientSync.build on rank " + r) &&
                    job.output(r).contains("compression: rank 0 has none, rank 1 has fp16"), job.outputs());
            }
        }
    }
}
