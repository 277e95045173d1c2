package dev.hccl.training;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HalfFloats;
import dev.hccl.api.HcclException;
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
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GradientSync over three ranks as threads (the in-JVM transport): the reduced values against a reference computed
 * here, the same bits on every rank, bucket boundaries, every misuse, and ranks that disagree.
 */
@Timeout(120)
class GradientSyncTest extends ThreeRanks
{
    /** Sizes with a zero-length gradient, one larger than the cap, and small ones: several buckets. */
    private static final int[] COUNTS = {300, 0, 7, 2000, 1, 64, 0, 129};

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

    private static GradientSyncBuilder smallBuckets(final GradientSyncBuilder b)
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
    void noSyncIsRefusedMidStepOrNestedAndItsCloseMidStep() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            try (GradientSync sync = GradientSync.builder(comm).buildViews(new long[]{8, 8}, DataType.FP32))
            {
                sync.markReady(0);
                final IllegalStateException midStep = assertThrows(IllegalStateException.class, sync::noSync);
                assertTrue(midStep.getMessage().startsWith("GradientSync.noSync() on rank " + comm.rank() +
                    ", step 0: in the middle of a step (1 gradients marked)"), midStep.getMessage());
                sync.markReady(1);
                sync.await();
                final NoSync scope = sync.noSync();
                assertTrue(assertThrows(IllegalStateException.class, sync::noSync).getMessage()
                    .contains("a noSync() scope is open already"));
                sync.markReady(1);
                assertTrue(assertThrows(IllegalStateException.class, scope::close).getMessage()
                    .contains("call await() to end it inside the scope"));
                sync.markReady(0);
                sync.await();
                scope.close();
                scope.close(); // idempotent
                assertEquals(1, sync.steps());
                assertEquals(1, sync.accumulatedSteps());
                sync.markReady(1);
                sync.markReady(0);
                sync.await(); // synchronises again: every rank issues it
                assertEquals(2, sync.steps());
            }
            return null;
        });
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

    @Test
    void awaitWithUnmarkedGradientsNamesThemAndTheStepGoesOn() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            try (GradientSync sync = smallBuckets(GradientSync.builder(comm)).build(grads, DataType.FP32))
            {
                for (final int g : new int[] {0, 2, 4, 5, 6})
                {
                    sync.markReady(g);
                }
                final IllegalStateException ex = assertThrows(IllegalStateException.class, sync::await);
                assertTrue(ex.getMessage().contains("gradients [1, 3, 7] of 8 were not marked ready"),
                    ex.getMessage());
                assertTrue(ex.getMessage().contains("on rank " + comm.rank()), ex.getMessage());
                sync.markReady(1);
                sync.markReady(3);
                final IllegalStateException one = assertThrows(IllegalStateException.class, sync::await);
                assertTrue(one.getMessage().contains("gradient 7 of 8 was not marked ready"), one.getMessage());
                sync.markReady(7);
                sync.await();
                assertReduced(grads, 0, DataType.FP32, true, 1e-6);
            }
            return null;
        });
    }

    @Test
    void markingAGradientTwiceFailsAndLosesNothing() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            try (GradientSync sync = smallBuckets(GradientSync.builder(comm)).build(grads, DataType.FP32))
            {
                sync.markReady(3);
                final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> sync.markReady(3));
                assertTrue(ex.getMessage().contains("gradient 3 was already marked ready in step 0"),
                    ex.getMessage());
                assertThrows(IllegalArgumentException.class, () -> sync.markReady(8));
                assertThrows(IllegalArgumentException.class, () -> sync.markReady(-1));
                for (int g = 0; g < COUNTS.length; g++)
                {
                    if (g != 3)
                    {
                        sync.markReady(g);
                    }
                }
                sync.await();
                assertReduced(grads, 0, DataType.FP32, true, 1e-6);
            }
            return null;
        });
    }

    @Test
    void aBufferWhosePositionOrLimitChangedIsRefused() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            try (GradientSync sync = GradientSync.builder(comm).build(grads, DataType.FP32))
            {
                grads.get(0).limit(100);
                final IllegalArgumentException ex =
                    assertThrows(IllegalArgumentException.class, () -> sync.markReady(0));
                assertTrue(ex.getMessage().contains("gradient 0's buffer now runs from 0 to 100, registered from 0 " +
                    "to 1200"), ex.getMessage());
                grads.get(0).limit(1200);
                markAll(sync, comm.rank());
                sync.await();
                assertReduced(grads, 0, DataType.FP32, true, 1e-6);
            }
            return null;
        });
    }

    @Test
    void aBufferShrunkAfterMarkingIsRefusedByAwaitWithTheStepKept() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            try (GradientSync sync = smallBuckets(GradientSync.builder(comm)).build(grads, DataType.FP32))
            {
                markAll(sync, comm.rank());
                grads.get(3).limit(40);
                final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, sync::await);
                assertTrue(ex.getMessage().contains("await() on rank " + comm.rank() + ", step 0: gradient 3's " +
                    "buffer now runs from 0 to 40, registered from 0 to 8000"), ex.getMessage());
                grads.get(3).limit(8000);
                sync.await();
                assertReduced(grads, 0, DataType.FP32, true, 1e-6);
            }
            return null;
        });
    }

    @Test
    void aBigEndianOrReadOnlyBufferIsRefused() throws Exception
    {
        final List<RankThreads.Outcome<Object>> bigEndian = RankThreads.each(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            grads.set(0, ByteBuffer.allocateDirect(COUNTS[0] * 4));
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        });
        bigEndian.forEach(o -> assertTrue(o.failure().getMessage().contains("gradient 0 is in BIG_ENDIAN byte " +
            "order; elements are read in native order"), String.valueOf(o.failure())));
        final List<RankThreads.Outcome<Object>> readOnly = RankThreads.each(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            grads.set(2, grads.get(2).asReadOnlyBuffer().order(ByteOrder.nativeOrder()));
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        });
        readOnly.forEach(o -> assertTrue(o.failure().getMessage().contains("gradient 2 is read-only"),
            String.valueOf(o.failure())));
        final List<RankThreads.Outcome<Object>> none = RankThreads.each(comms, comm ->
            GradientSync.builder(comm).build(comm.rank() == 1 ? List.of() : gradients(comm.rank(), 0,
                DataType.FP32), DataType.FP32));
        assertTrue(none.get(1).failure().getMessage().contains("no gradients"), String.valueOf(none.get(1).failure()));
        assertTrue(none.get(0).failure().getMessage().contains("rank 1 refused its gradients"),
            String.valueOf(none.get(0).failure()));
    }

    @Test
    void aClosedHelperRefusesCallsAndLeavesTheCommunicatorOpen() throws Exception
    {
        RankThreads.values(comms, comm ->
        {
            final GradientSync sync = GradientSync.builder(comm).build(gradients(comm.rank(), 0, DataType.FP32),
                DataType.FP32);
            sync.close();
            sync.close();
            assertThrows(IllegalStateException.class, () -> sync.markReady(0));
            assertThrows(IllegalStateException.class, sync::await);
            comm.barrier();
            return null;
        });
    }

    @Test
    void aHeapBufferOnOneRankFailsThatRankAndNamesItOnTheOthers() throws Exception
    {
        final List<RankThreads.Outcome<Object>> outcomes = RankThreads.each(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            if (comm.rank() == 1)
            {
                grads.set(5, ByteBuffer.allocate(COUNTS[5] * 4));
            }
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        });
        final Throwable own = outcomes.get(1).failure();
        assertInstanceOf(IllegalArgumentException.class, own);
        assertTrue(own.getMessage().contains("gradient 5 is a heap buffer"), own.getMessage());
        for (final int r : new int[] {0, 2})
        {
            final HcclException ex = assertInstanceOf(HcclException.class, outcomes.get(r).failure());
            assertTrue(ex.getMessage().contains("rank 1 refused its gradients"), ex.getMessage());
        }
    }

    @Test
    void aPartialElementOrAnUnsupportedTypeIsRefused() throws Exception
    {
        final List<RankThreads.Outcome<Object>> partial = RankThreads.each(comms, comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            grads.get(2).limit(27);
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        });
        for (final RankThreads.Outcome<Object> o : partial)
        {
            assertInstanceOf(IllegalArgumentException.class, o.failure());
            assertTrue(o.failure().getMessage().contains("gradient 2 holds 27 bytes, not a whole number of FP32"),
                o.failure().getMessage());
        }
        final List<RankThreads.Outcome<Object>> fp64 = RankThreads.each(comms, comm ->
            GradientSync.builder(comm).build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP64));
        fp64.forEach(o -> assertTrue(o.failure().getMessage().contains("GradientSync takes FP32, FP16 or BF16"),
            String.valueOf(o.failure())));
        final List<RankThreads.Outcome<Object>> narrowHalf = RankThreads.each(comms, comm ->
            GradientSync.builder(comm).compression(Compression.fp16()).build(gradients(comm.rank(), 0,
                DataType.FP16), DataType.FP16));
        narrowHalf.forEach(o -> assertTrue(o.failure().getMessage().contains("compression fp16 applies to FP32 " +
            "gradients, these are FP16"), String.valueOf(o.failure())));
    }

    // ---- ranks that disagree fail at build, naming both settings ----

    @Test
    void ranksWithDifferentCompressionFailNamingBoth() throws Exception
    {
        final List<RankThreads.Outcome<Object>> outcomes = RankThreads.each(comms, comm ->
            GradientSync.builder(comm).compression(comm.rank() == 0 ? Compression.fp16() : Compression.topK(0.01))
                .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32));
        for (final RankThreads.Outcome<Object> o : outcomes)
        {
            final HcclException ex = assertInstanceOf(HcclException.class, o.failure());
            assertEquals(ErrorCode.E_MISMATCH, ex.errorCode());
            assertTrue(ex.getMessage().contains("compression: rank 0 has fp16, rank 1 has topK"), ex.getMessage());
        }
    }

    @Test
    void ranksWithDifferentSettingsOrSizesFailNamingBoth() throws Exception
    {
        assertEveryRankFails(comm -> GradientSync.builder(comm).average(comm.rank() != 2)
            .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32), "average: rank 0 has true, rank 2 has false");
        assertEveryRankFails(comm -> GradientSync.builder(comm).bucketCapBytes(comm.rank() == 1 ? 1000 : 2000)
            .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32),
            "bucketCapBytes: rank 0 has 2000, rank 1 has 1000");
        assertEveryRankFails(comm -> GradientSync.builder(comm).compression(Compression.topK(
            comm.rank() == 1 ? 0.1 : 0.01)).build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32),
            "topK fraction: rank 0 has 0.01, rank 1 has 0.1");
        assertEveryRankFails(comm ->
        {
            final List<ByteBuffer> grads = gradients(comm.rank(), 0, DataType.FP32);
            if (comm.rank() == 2)
            {
                grads.get(6).limit(0).position(0);
                grads.set(3, ByteBuffer.allocateDirect(1999 * 4).order(ByteOrder.nativeOrder()));
            }
            return GradientSync.builder(comm).build(grads, DataType.FP32);
        }, "gradient 3 has 2000 elements on rank 0 and 1999 on rank 2");
        assertEveryRankFails(comm -> GradientSync.builder(comm).build(
            gradients(comm.rank(), 0, DataType.FP32).subList(0, comm.rank() == 1 ? 7 : 8), DataType.FP32),
            "gradient count: rank 0 has 8, rank 1 has 7");
    }

    private void assertEveryRankFails(final RankThreads.RankTask<Object> task, final String message)
        throws Exception
    {
        for (final RankThreads.Outcome<Object> o : RankThreads.each(comms, task))
        {
            final HcclException ex = assertInstanceOf(HcclException.class, o.failure(), String.valueOf(o.value()));
            assertEquals(ErrorCode.E_MISMATCH, ex.errorCode());
            assertTrue(ex.getMessage().contains(message), ex.getMessage());
        }
    }

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
