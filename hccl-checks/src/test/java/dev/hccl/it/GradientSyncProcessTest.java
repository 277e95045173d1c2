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
 * zero-length gradients, one larger than the bucket cap and two thousand tiny ones (or a single gradient), marked
 * ready from two threads in each rank's own order. Every result is checked on each rank, against the mean or, under
 * top-k, bit for bit against error feedback simulated for every rank; the last result's bits agree on every rank;
 * misuse is refused without losing the step; ranks built with different compressions all fail, naming both;
 * steps accumulated in a noSync() scope synchronise once; autotune, turned on by the launcher's setting, tries and
 * keeps the same bucket sizes on every rank.
 */
@Timeout(300)
class GradientSyncProcessTest
{
    private static final int RANKS = 3;

    private static Map<String, String> over(final String transport)
    {
        return Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_EXEC_TIMEOUT", "60");
    }

    @ParameterizedTest(name = "{1} {2} {3} over {0}")
    @CsvSource({
        "tcp, none, fused, odd", "tcp, none, views, one", "shm, none, fused, one", "shm, none, views, odd",
        "tcp, fp16, views, odd", "shm, bf16, fused, odd", "tcp, topk:0.05, fused, odd", "shm, topk:0.05, views, one",
        "tcp, fp8e4m3, views, odd", "shm, fp8e5m2, fused, odd"})
    void everyRankHoldsTheExpectedGradients(
        final String transport, final String compression, final String layout, final String model) throws Exception
    {
        try (ProcessJob job = ProcessJob.start(RANKS, GradientSyncWorker.class, "512m", over(transport),
            "compression=" + compression, "layout=" + layout, "model=" + model))
        {
            assertSameResultEverywhere(job);
        }
    }

    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"tcp", "shm"})
    void misuseIsRefusedAndTheStepGoesOn(final String transport) throws Exception
    {
        try (ProcessJob job = ProcessJob.start(RANKS, GradientSyncWorker.class, "256m", over(transport),
            "compression=none", "layout=fused", "model=odd", "misuse"))
        {
            assertSameResultEverywhere(job);
            for (int r = 0; r < RANKS; r++)
            {
                assertTrue(job.output(r).contains("MISUSE OK"), job.outputs());
            }
        }
    }

    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"tcp", "shm"})
    void ranksThatDisagreeOnCompressionAllFailNamingBoth(final String transport) throws Exception
    {
        try (ProcessJob job = ProcessJob.start(RANKS, GradientSyncWorker.class, "256m", over(transport),
            "compression=none", "odd=1"))
        {
            for (int r = 0; r < RANKS; r++)
            {
                assertEquals(3, job.awaitExit(r, 120), job.outputs());
                assertTrue(job.output(r).contains("REFUSED E_MISMATCH: GradientSync.build on rank " + r) &&
                    job.output(r).contains("compression: rank 0 has none, rank 1 has fp16"), job.outputs());
            }
        }
    }

    /**
     * Gradient accumulation ({@code noSync()}): three micro-steps that start no collective, then one that all-reduces
     * the sums; the mean of the sums on every rank, twice over.
     */
    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"tcp", "shm"})
    void accumulatedStepsSynchroniseOnceWithTheMeanOfTheSums(final String transport) throws Exception
    {
        try (ProcessJob job = ProcessJob.start(RANKS, AccumulationWorker.class, "256m", over(transport)))
        {
            for (int r = 0; r < RANKS; r++)
            {
                assertEquals(0, job.awaitExit(r, 120), job.outputs());
                assertTrue(job.output(r).contains("ACCUMULATION OK"), job.outputs());
            }
        }
    }

    /**
     * {@code HCCL_AUTOTUNE=1}, as a launcher sets it: every step's result is checked while the trials change the
     * buckets, and every rank reports the same trials and choice.
     */
    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"tcp", "shm"})
    void autotuneFromTheLaunchersSettingChoosesAlikeOnEveryRank(final String transport) throws Exception
    {
        final Map<String, String> env = new java.util.HashMap<>(over(transport));
        env.put("HCCL_AUTOTUNE", "1");
        try (ProcessJob job = ProcessJob.start(RANKS, GradientSyncWorker.class, "256m", env, "compression=none",
            "layout=views", "model=odd", "steps=80"))
        {
            assertSameResultEverywhere(job);
            final String line = job.output(0).lines().filter(l -> l.startsWith("AUTOTUNE ")).findFirst().orElseThrow();
            assertTrue(line.startsWith("AUTOTUNE CHOSEN ") && line.contains("AutotuneTrial[") &&
                line.indexOf("AutotuneTrial[", line.indexOf("AutotuneTrial[") + 1) > 0, "two trials or more: " + line);
            for (int r = 1; r < RANKS; r++)
            {
                assertTrue(job.output(r).contains(line), "rank " + r + " tuned unlike rank 0:\n" + job.outputs());
            }
        }
    }

    /**
     * A rank killed or frozen while autotune tries sizes (whose trials end in an all-reduce inside {@code await}):
     * the others' {@code await} fails within seconds, naming that rank, instead of waiting for it.
     */
    @ParameterizedTest(name = "over {0}, SIG{1}")
    @CsvSource({"shm, KILL", "tcp, STOP"})
    void aRankKilledOrFrozenWhileAutotuneTriesFailsTheOthersNamingIt(final String transport, final String signal)
        throws Exception
    {
        final Map<String, String> env = new java.util.HashMap<>(over(transport));
        env.put("HCCL_AUTOTUNE", "1");
        env.put("HCCL_HEARTBEAT_TIMEOUT", "3");
        final int lost = 1;
        try (ProcessJob job = ProcessJob.start(RANKS, GradientSyncWorker.class, "256m", env, "compression=none",
            "layout=fused", "model=odd", "steps=1000", "stepMillis=100"))
        {
            assertTrue(job.awaitLine(0, "STEP 5 OK", 120), job.outputs());
            final long lostAt = System.nanoTime();
            assertEquals(0, new ProcessBuilder("kill", "-" + signal, Long.toString(job.process(lost).pid())).start()
                .waitFor(), "kill -" + signal);
            for (int r = 0; r < RANKS; r++)
            {
                if (r == lost)
                {
                    continue;
                }
                assertEquals(4, job.awaitExit(r, 90), job.outputs());
                final double seconds = (System.nanoTime() - lostAt) / 1e9;
                final String output = job.output(r);
                assertTrue(output.contains("FAILED in step ") && output.contains("(TRIAL)") &&
                    output.contains("rank " + lost), "rank " + r + " must fail naming rank " + lost + ":\n" + output);
                assertTrue(seconds < 45, "rank " + r + " took " + seconds + " s to fail");
            }
        }
    }

    private static void assertSameResultEverywhere(final ProcessJob job) throws Exception
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
