package dev.hccl.it;

import dev.hccl.examples.DataParallelTraining;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 14's training example in real processes, over TCP and over shared memory: four ranks train the MLP
 * data-parallel through {@code GradientSync} and every rank checks itself against the single-process run on all the
 * data: uncompressed, the weights equal to float rounding; under bf16, fp8, top-k and PowerSGD, the loss within its
 * tolerance.
 * Small settings (a narrower model, fewer samples and epochs) keep each job to seconds.
 */
@Timeout(300)
class DataParallelTrainingTest
{
    private static final int RANKS = 4;

    @ParameterizedTest(name = "over {0}, compression {1}")
    @CsvSource({
        "tcp, none, OK: weights match the single-process run",
        "shm, none, OK: weights match the single-process run",
        "shm, bf16, OK: loss matches the single-process run's",
        "shm, fp8e4m3, OK: loss matches the single-process run's",
        "tcp, topk:0.01, OK: loss matches the single-process run's",
        "shm, powersgd:1, OK: loss matches the single-process run's",
        "tcp, powersgd:2, OK: loss matches the single-process run's"})
    void everyRankMatchesTheSingleProcessRun(final String transport, final String compression, final String verdict)
        throws Exception
    {
        try (ProcessJob job = ProcessJob.start(RANKS, DataParallelTraining.class, "256m",
            Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_EXEC_TIMEOUT", "120"),
            "--compression", compression, "--hidden", "64", "--samples", "2048", "--epochs", "5", "--timed-steps",
            "3", "--bucket-kib", "8"))
        {
            for (int r = 0; r < RANKS; r++)
            {
                assertEquals(0, job.awaitExit(r, 240), "rank " + r + " failed:\n" + job.outputs());
            }
            final String lead = job.output(0);
            assertTrue(lead.contains(RANKS + " ranks over " + transport + ","), "transport:\n" + lead);
            assertTrue(lead.contains(verdict), "no \"" + verdict + "\":\n" + job.outputs());
            assertTrue(lead.contains("overlap on") && lead.contains("overlap off") &&
                lead.contains("% of the step)"), "timings:\n" + lead);
            for (int r = 0; r < RANKS; r++)
            {
                assertTrue(!job.output(r).contains("FAILED"), "rank " + r + ":\n" + job.outputs());
            }
        }
    }
}
