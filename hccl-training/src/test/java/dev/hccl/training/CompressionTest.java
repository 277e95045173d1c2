package dev.hccl.training;

import dev.hccl.api.DataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Compression round trips over three ranks as threads: fp16 and bf16 within their precision and never overflowing
 * silently, top-k with error feedback against a reference computed here, and the same bits on every rank.
 */
@Timeout(120)
class CompressionTest extends ThreeRanks
{
    private static final int COUNT = 5000;

    /** One gradient of {@code COUNT} FP32 values, {@code scale * value(rank, step, 0, e)}. */
    private static ByteBuffer gradient(final int rank, final int step, final float scale)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(COUNT * 4).order(ByteOrder.nativeOrder());
        for (int e = 0; e < COUNT; e++)
        {
            b.putFloat(e * 4, scale * GradientSyncTest.value(rank, step, 0, e));
        }
        return b;
    }

    private static double mean(final int step, final int e, final float scale)
    {
        double sum = 0;
        for (int r = 0; r < RANKS; r++)
        {
            sum += scale * GradientSyncTest.value(r, step, 0, e);
        }
        return sum / RANKS;
    }

    /** Runs one step of {@code compression} on every rank; returns each rank's result and report. */
    private List<Object[]> step(final Compression compression, final float scale) throws Exception
    {
        return RankThreads.values(comms, comm ->
        {
            final ByteBuffer g = gradient(comm.rank(), 0, scale);
            try (GradientSync sync = GradientSync.builder(comm).compression(compression).build(List.of(g),
                DataType.FP32))
            {
                sync.markReady(0);
                sync.await();
                final float[] out = new float[COUNT];
                g.asFloatBuffer().get(out);
                return new Object[] {out, sync.lastStep(), sync.fallbacks(), sync.steps()};
            }
        });
    }

    private static void assertSameOnEveryRank(final List<Object[]> results)
    {
        for (int r = 1; r < RANKS; r++)
        {
            assertArrayEquals((float[])results.get(0)[0], (float[])results.get(r)[0], "rank " + r);
        }
    }

    @Test
    void fp16CarriesTheMeanWithinItsPrecisionOnHalfTheBytes() throws Exception
    {
        final List<Object[]> results = step(Compression.fp16(), 1);
        assertSameOnEveryRank(results);
        final float[] out = (float[])results.get(0)[0];
        for (int e = 0; e < COUNT; e++)
        {
            // Three values of at most 1/3 each, rounded to binary16 (2^-11 relative), summed in two hops.
            assertEquals(mean(0, e, 1), out[e], 1.5e-3, "element " + e);
        }
        final StepReport report = (StepReport)results.get(0)[1];
        assertEquals(2L * COUNT, report.wireBytes());
        assertEquals(0, report.fallbacks());
        assertEquals(0L, results.get(0)[2], "fallbacks since the build");
    }

    @Test
    void fp16DoesNotOverflowOnLargeSumsOfValuesThatFit() throws Exception
    {
        // Each rank's values reach 60000: their sum would overflow binary16 (65504), their mean does not.
        final List<Object[]> results = step(Compression.fp16(), 60_000);
        assertSameOnEveryRank(results);
        assertEquals(0, ((StepReport)results.get(0)[1]).fallbacks());
        final float[] out = (float[])results.get(0)[0];
        for (int e = 0; e < COUNT; e++)
        {
            assertEquals(mean(0, e, 60_000), out[e], 60_000 * 1.5e-3, "element " + e);
        }
    }

    @Test
    void fp16FallsBackToFp32WhereValuesDoNotFitSoNothingIsSilentlyWrong() throws Exception
    {
        // 1e6 / 3 is beyond binary16's range: every rank sees the infinity and repeats the bucket in FP32.
        final List<Object[]> results = step(Compression.fp16(), 1e6f);
        assertSameOnEveryRank(results);
        assertEquals(1, ((StepReport)results.get(0)[1]).fallbacks());
        assertEquals(1L, results.get(0)[2], "fallbacks since the build");
        assertEquals(1L, results.get(0)[3], "steps since the build");
        final float[] exact = (float[])step(Compression.none(), 1e6f).get(0)[0];
        assertArrayEquals(exact, (float[])results.get(0)[0]);
    }

    @Test
    void bf16CarriesTheMeanWithinItsPrecision() throws Exception
    {
        final List<Object[]> results = step(Compression.bf16(), 1);
        assertSameOnEveryRank(results);
        final float[] out = (float[])results.get(0)[0];
        for (int e = 0; e < COUNT; e++)
        {
            // bfloat16 keeps 8 bits: 2^-9 relative per rounding, three roundings of values below 1.
            assertEquals(mean(0, e, 1), out[e], 8e-3, "element " + e);
        }
    }

    @Test
    void topKOfEverythingIsTheExactSumInRankOrder() throws Exception
    {
        final List<Object[]> results = step(Compression.topK(1.0), 1);
        assertSameOnEveryRank(results);
        final float[] out = (float[])results.get(0)[0];
        for (int e = 0; e < COUNT; e++)
        {
            float sum = 0;
            for (int r = 0; r < RANKS; r++)
            {
                sum += GradientSyncTest.value(r, 0, 0, e);
            }
            assertEquals(sum / RANKS, out[e], 0.0f, "element " + e);
        }
    }

    /**
     * Three steps of top-k at 1%, checked against a reference that sorts: each rank sends its 50 largest
     * magnitudes of gradient plus residual, the result is their mean over the ranks, and the residual keeps exactly
     * what was not sent.
     */
    @Test
    void topKSendsTheLargestAndTheResidualCarriesTheRest() throws Exception
    {
        final int steps = 3;
        final int k = TopKCodec.elementsSent(COUNT, 0.01);
        assertEquals(50, k);
        final float[][] residual = new float[RANKS][COUNT];
        final List<float[][]> results = RankThreads.values(comms, comm ->
        {
            final ByteBuffer g = gradient(comm.rank(), 0, 1);
            final float[][] outs = new float[steps * 2][];
            try (GradientSync sync = GradientSync.builder(comm).compression(Compression.topK(0.01))
                .build(List.of(g), DataType.FP32))
            {
                for (int s = 0; s < steps; s++)
                {
                    g.put(0, gradient(comm.rank(), s, 1), 0, COUNT * 4);
                    sync.markReady(0);
                    sync.await();
                    assertEquals(8L * k, sync.lastStep().wireBytes());
                    outs[2 * s] = new float[COUNT];
                    g.asFloatBuffer().get(outs[2 * s]);
                    outs[2 * s + 1] = new float[COUNT];
                    sync.residual(0).get(outs[2 * s + 1]);
                }
            }
            return outs;
        });
        for (int s = 0; s < steps; s++)
        {
            final float[] expected = new float[COUNT];
            for (int r = 0; r < RANKS; r++)
            {
                final float[] acc = new float[COUNT];
                for (int e = 0; e < COUNT; e++)
                {
                    acc[e] = GradientSyncTest.value(r, s, 0, e) + residual[r][e];
                }
                final int[] top = IntStream.range(0, COUNT).boxed()
                    .sorted(Comparator.comparingDouble((Integer e) -> -Math.abs(acc[e]))).limit(k)
                    .mapToInt(Integer::intValue).sorted().toArray();
                residual[r] = acc.clone();
                for (final int e : top)
                {
                    expected[e] += acc[e];
                    residual[r][e] = 0;
                }
                assertArrayEquals(residual[r], results.get(r)[2 * s + 1], "residual of rank " + r + ", step " + s);
            }
            for (int e = 0; e < COUNT; e++)
            {
                expected[e] /= RANKS;
            }
            for (int r = 0; r < RANKS; r++)
            {
                assertArrayEquals(expected, results.get(r)[2 * s], "result of rank " + r + ", step " + s);
            }
        }
        assertTrue(IntStream.range(0, COUNT).anyMatch(e -> residual[0][e] != 0), "something was held back");
    }

    @Test
    void topKSelectorHandlesTiesZerosAndNaN()
    {
        final TopKSelector selector = new TopKSelector();
        final FloatBuffer values = FloatBuffer.wrap(new float[] {0, 2, -2, 0, 1, Float.NaN, -2, 0});
        final int[] picked = new int[3];
        selector.select(values, 8, 3, picked);
        assertArrayEquals(new int[] {1, 2, 5}, picked, "NaN first, then the first two of the three 2s");
        final FloatBuffer zeros = FloatBuffer.wrap(new float[100_000]);
        final int[] many = new int[500];
        selector.select(zeros, 100_000, 500, many);
        assertEquals(499, many[499]);
        final List<Integer> all = new ArrayList<>();
        selector.select(FloatBuffer.wrap(new float[] {5}), 1, 1, picked);
        all.add(picked[0]);
        assertEquals(List.of(0), all);
    }
}
