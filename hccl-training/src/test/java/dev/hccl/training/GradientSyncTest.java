package dev.hccl.training;

import dev.hccl.api.DataType;
import dev.hccl.api.HalfFloats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GradientSync over three ranks as threads (the in-JVM transport): the reduced values against a reference computed
 * here, the same bits on every rank, bucket boundaries, views, FP8's scale and the step's report. Misuse is
 * {@link GradientSyncMisuseTest}'s, autotune {@link GradientSyncAutotuneTest}'s; the helpers here serve them all.
 */
@Timeout(120)
class GradientSyncTest extends ThreeRanks
{
    /** Sizes with a zero-length gradient, one larger than the cap, and small ones: several buckets. */
    static final int[] COUNTS = {300, 0, 7, 2000, 1, 64, 0, 129};

    /** Rank r's value of gradient g, element e, in step s: inexact, in [-1, 1). */
    static float value(final int rank, final int step, final int g, final int e)
    {
        final long seed = ((long)rank * 1_000_003 + step) * 7919 + g * 104_729L + e;
        return (float)(new Random(seed).nextDouble() * 2 - 1);
    }

    static List<ByteBuffer> gradients(final int rank, final int step, final DataType type)
    {
        final List<ByteBuffer> grads = new ArrayList<>();
        for (int g = 0; g < COUNTS.length; g++)
        {
            final ByteBuffer b = ByteBuffer.allocateDirect(COUNTS[g] * type.size()).order(ByteOrder.nativeOrder());
            fill(b, rank, step, g, type);
            grads.add(b);
        }
        return grads;
    }

    static void fill(final ByteBuffer b, final int rank, final int step, final int g, final DataType type)
    {
        final int count = b.remaining() / type.size();
        for (int e = 0; e < count; e++)
        {
            final float v = value(rank, step, g, e);
            switch (type)
            {
                case FP32 -> b.putFloat(b.position() + e * 4, v);
                case FP16 -> b.putShort(b.position() + e * 2, HalfFloats.floatToFp16(v));
                default -> b.putShort(b.position() + e * 2, HalfFloats.floatToBf16(v));
            }
        }
    }

    static float get(final ByteBuffer b, final int e, final DataType type)
    {
        return switch (type)
        {
            case FP32 -> b.getFloat(b.position() + e * 4);
            case FP16 -> HalfFloats.fp16ToFloat(b.getShort(b.position() + e * 2));
            default -> HalfFloats.bf16ToFloat(b.getShort(b.position() + e * 2));
        };
    }

    /** Checks every gradient against the mean (or sum) of the ranks' values within {@code tolerance}. */
    static void assertReduced(
        final List<ByteBuffer> grads, final int step, final DataType type, final boolean average,
        final double tolerance)
    {
        for (int g = 0; g < COUNTS.length; g++)
        {
            for (int e = 0; e < COUNTS[g]; e++)
            {
                double sum = 0;
                for (int r = 0; r < RANKS; r++)
                {
                    sum += type == DataType.FP32 ? value(r, step, g, e) : get(encoded(r, step, g, e, type), 0, type);
                }
                final double expected = average ? sum / RANKS : sum;
                assertEquals(expected, get(grads.get(g), e, type), tolerance, "gradient " + g + " element " + e);
            }
        }
    }

    private static ByteBuffer encoded(final int r, final int step, final int g, final int e, final DataType type)
    {
        final ByteBuffer one = ByteBuffer.allocate(2).order(ByteOrder.nativeOrder());
        one.putShort(0, type == DataType.FP16 ? HalfFloats.floatToFp16(value(r, step, g, e)) :
            HalfFloats.floatToBf16(value(r, step, g, e)));
        return one;
    }

    static byte[] bytes(final List<ByteBuffer> grads)
    {
        final ByteBuffer all = ByteBuffer.allocate(grads.stream().mapToInt(ByteBuffer::remaining).sum());
        grads.forEach(b -> all.put(b.duplicate()));
        return all.array();
    }

    /** Marks every gradient ready in an order of the rank's own. */
    static void markAll(final GradientSync sync, final int rank)
    {
        final List<Integer> order = new ArrayList<>();
        for (int g = 0; g < COUNTS.length; g++)
        {
            order.add(g);
        }
        Collections.shuffle(order, new Random(rank));
        order.forEach(sync::markReady);
    }

    private List<byte[]> run(final DataType type, final GradientSyncBuilderSettings settings, final int steps,
        final boolean average, final double tolerance) throws Exception
    {
        return RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, type);
            byte[] last = null;
            try (GradientSync sync = settings.apply(GradientSync.builder(comm).average(average)).build(grads, type))
            {
                for (int s = 0; s < steps; s++)
                {
                    for (int g = 0; g < COUNTS.length; g++)
                    {
                        fill(grads.get(g), comm.rank(), s, g, type);
                    }
                    markAll(sync, comm.rank());
                    sync.await();
                    assertReduced(grads, s, type, average, tolerance);
                    last = bytes(grads);
                }
            }
            return last;
        });
    }

    /** Settings a test adds to the builder. */
    interface GradientSyncBuilderSettings
    {
        GradientSyncBuilder apply(GradientSyncBuilder b);
    }

    static GradientSyncBuilder smallBuckets(final GradientSyncBuilder b)
    {
        return b.firstBucketBytes(256).bucketCapBytes(1024);
    }

    private static void assertSameOnEveryRank(final List<byte[]> results)
    {
        for (int r = 1; r < RANKS; r++)
        {
            assertArrayEquals(results.get(0), results.get(r), "rank " + r + " differs from rank 0");
        }
    }

    @Test
    void averagesEveryGradientToTheSameBitsOnEveryRankStepAfterStep() throws Exception
    {
        assertSameOnEveryRank(run(DataType.FP32, GradientSyncTest::smallBuckets, 3, true, 1e-6));
    }

    @Test
    void sumsWhenAverageIsOff() throws Exception
    {
        assertSameOnEveryRank(run(DataType.FP32, GradientSyncTest::smallBuckets, 1, false, 2e-6));
    }

    @Test
    void reducesHalfPrecisionGradients() throws Exception
    {
        assertSameOnEveryRank(run(DataType.FP16, GradientSyncTest::smallBuckets, 2, true, 2e-3));
        assertSameOnEveryRank(run(DataType.BF16, GradientSyncTest::smallBuckets, 2, true, 1.6e-2));
    }

    @Test
    void defaultBucketsHoldEverythingInOne() throws Exception
    {
        assertSameOnEveryRank(run(DataType.FP32, b -> b, 1, true, 1e-6));
    }

    @Test
    void overlapOffGivesTheSameBitsAsOverlapOn() throws Exception
    {
        final List<byte[]> on = run(DataType.FP32, GradientSyncTest::smallBuckets, 1, true, 1e-6);
        final List<byte[]> off = run(DataType.FP32, b -> smallBuckets(b).overlap(false), 1, true, 1e-6);
        assertArrayEquals(on.get(0), off.get(0));
    }

    @Test
    void bucketsStartInBucketOrderAndTheLastRegisteredGoFirst() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            try (GradientSync sync = smallBuckets(GradientSync.builder(comm)).build(gradients(comm.rank(), 0,
                DataType.FP32), DataType.FP32))
            {
                assertEquals(0, sync.bucketOf(COUNTS.length - 1));
                assertTrue(sync.bucketOf(0) == sync.bucketCount() - 1);
                assertTrue(sync.bucketCount() >= 3, "several buckets: " + sync.bucketCount());
                assertTrue(sync.bucketOf(3) != sync.bucketOf(4) && sync.bucketOf(3) != sync.bucketOf(2),
                    "the gradient larger than the cap has a bucket of its own");
            }
            return null;
        });
    }

    @Test
    void viewsOfTheBucketsAreReducedInPlace() throws Exception
    {
        final List<byte[]> results = RankThreads.values(comms, comm ->
        {
            final long[] counts = java.util.Arrays.stream(COUNTS).asLongStream().toArray();
            try (GradientSync sync = smallBuckets(GradientSync.builder(comm)).buildViews(counts, DataType.FP32))
            {
                final List<ByteBuffer> views = sync.gradients();
                for (int s = 0; s < 2; s++)
                {
                    for (int g = 0; g < COUNTS.length; g++)
                    {
                        assertEquals(COUNTS[g] * 4, views.get(g).remaining());
                        assertTrue(views.get(g).isDirect());
                        fill(views.get(g), comm.rank(), s, g, DataType.FP32);
                    }
                    markAll(sync, comm.rank());
                    sync.await();
                    assertReduced(views, s, DataType.FP32, true, 1e-6);
                }
                return bytes(views);
            }
        });
        assertSameOnEveryRank(results);
    }

    /**
     * FP8 with its per-bucket scale: a bucket of gradients around 1e-6, which E4M3 without a scale flushes to zero
     * (its smallest subnormal is 2^-9), keeps its mean to E4M3's precision; a step whose values outgrew the scale
     * tenfold, and one with an infinity on one rank, fall back to FP32 on every rank, with the FP32 mean.
     */
    @Test
    void fp8ScalesEachBucketAndFallsBackWhenValuesOutgrowTheScale() throws Exception
    {
        for (final Compression fp8 : List.of(Compression.fp8e4m3(), Compression.fp8e5m2()))
        {
            RankThreads.values(comms, comm ->
            {
                final int n = comm.worldSize();
                try (GradientSync sync = GradientSync.builder(comm).compression(fp8).buildViews(new long[]{1000},
                    DataType.FP32))
                {
                    final ByteBuffer g = sync.gradients().get(0);
                    final float[] magnitudes = {1e-6f, 1e-6f, 1e-5f, 1e-5f};
                    for (int step = 0; step < magnitudes.length; step++)
                    {
                        for (int i = 0; i < 1000; i++)
                        {
                            g.putFloat(4 * i, magnitudes[step] * (comm.rank() + 1) * (1 + i % 10) / 10f);
                        }
                        if (step == 3 && comm.rank() == 1)
                        {
                            g.putFloat(4 * 7, Float.POSITIVE_INFINITY);
                        }
                        sync.markReady(0);
                        sync.await();
                        final boolean fallback = step >= 2; // 10x the scale's magnitude; then an infinity
                        assertEquals(fallback ? 1 : 0, sync.lastStep().fallbacks(), fp8 + " step " + step);
                        for (int i = 0; i < 1000; i++)
                        {
                            final float mean = magnitudes[step] * (n + 1) / 2f * (1 + i % 10) / 10f;
                            final float got = g.getFloat(4 * i);
                            if (step == 3 && i == 7)
                            {
                                assertEquals(Float.POSITIVE_INFINITY, got);
                                continue;
                            }
                            // Each value and each partial sum rounded to 3 or 2 fraction bits; vanished is 100%.
                            final double tolerance = fallback ? 1e-6 : fp8.kind() == Compression.Kind.FP8_E4M3 ?
                                0.25 : 0.5;
                            assertEquals(mean, got, tolerance * mean, fp8 + " step " + step + " element " + i);
                        }
                    }
                    assertEquals(2, sync.fallbacks());
                }
                return null;
            });
        }
    }

    @Test
    void reportsTheStep() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            try (GradientSync sync = smallBuckets(GradientSync.builder(comm)).build(gradients(comm.rank(), 0,
                DataType.FP32), DataType.FP32))
            {
                assertEquals(null, sync.lastStep());
                markAll(sync, comm.rank());
                sync.await();
                final StepReport report = sync.lastStep();
                assertEquals(0, report.step());
                assertEquals(sync.bucketCount(), report.buckets());
                assertEquals(4L * java.util.Arrays.stream(COUNTS).sum(), report.wireBytes());
                assertTrue(report.waitNanos() > 0);
                assertEquals(0, report.fallbacks());
            }
            return null;
        });
    }

    // ---- misuse: a clear error that loses nothing ----

    // ---- ranks that disagree fail at build, naming both settings ----

    @Test
    void theDefaultsAreDdps()
    {
        assertEquals(25L << 20, GradientSyncBuilder.DEFAULT_BUCKET_CAP_BYTES);
        assertEquals(1L << 20, GradientSyncBuilder.DEFAULT_FIRST_BUCKET_BYTES);
        assertFalse(Compression.none().equals(Compression.fp16()));
        assertEquals("topK(0.01)", Compression.topK(0.01).toString());
        assertThrows(IllegalArgumentException.class, () -> Compression.topK(0));
        assertThrows(IllegalArgumentException.class, () -> Compression.topK(1.5));
        assertThrows(IllegalArgumentException.class, () -> GradientSync.builder(comms.get(0)).bucketCapBytes(0));
    }
}
