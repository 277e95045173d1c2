package dev.hccl.training;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BucketPlanTest
{
    @Test
    void fillsBucketsInReverseOrderWithTheFirstCappedSmaller()
    {
        // Ten gradients of 100 bytes: the first bucket takes 2 (cap 250), the others 4 (cap 400).
        final long[] sizes = new long[10];
        Arrays.fill(sizes, 100);
        final BucketPlan plan = BucketPlan.of(sizes, 250, 400);
        assertEquals(3, plan.bucketCount());
        assertArrayEquals(new int[] {9, 8}, plan.members(0));
        assertArrayEquals(new int[] {7, 6, 5, 4}, plan.members(1));
        assertArrayEquals(new int[] {3, 2, 1, 0}, plan.members(2));
        assertEquals(200, plan.bytes(0));
        assertEquals(400, plan.bytes(1));
        assertEquals(0, plan.offsetOf(7));
        assertEquals(300, plan.offsetOf(4));
        assertEquals(2, plan.bucketOf(0));
    }

    @Test
    void aGradientLargerThanTheCapHasABucketOfItsOwn()
    {
        final BucketPlan plan = BucketPlan.of(new long[] {10, 5000, 10}, 100, 100);
        assertEquals(3, plan.bucketCount());
        assertArrayEquals(new int[] {2}, plan.members(0));
        assertArrayEquals(new int[] {1}, plan.members(1));
        assertEquals(5000, plan.bytes(1));
        assertArrayEquals(new int[] {0}, plan.members(2));
    }

    @Test
    void zeroLengthGradientsJoinTheBucketBeingFilled()
    {
        final BucketPlan plan = BucketPlan.of(new long[] {0, 40, 0, 0, 80, 0}, 100, 100);
        assertEquals(2, plan.bucketCount());
        assertArrayEquals(new int[] {5, 4, 3, 2}, plan.members(0));
        assertArrayEquals(new int[] {1, 0}, plan.members(1));
        assertEquals(80, plan.offsetOf(3));
        assertEquals(40, plan.offsetOf(0));
    }

    @Test
    void onlyZeroLengthGradientsMakeOneEmptyBucket()
    {
        final BucketPlan plan = BucketPlan.of(new long[] {0, 0}, 100, 100);
        assertEquals(1, plan.bucketCount());
        assertEquals(0, plan.bytes(0));
    }

    @Test
    void oneGradientMakesOneBucket()
    {
        final BucketPlan plan = BucketPlan.of(new long[] {4096}, 1 << 20, 25 << 20);
        assertEquals(1, plan.bucketCount());
        assertArrayEquals(new int[] {0}, plan.members(0));
    }

    @Test
    void thousandsOfTinyGradientsFillEachBucketToItsCap()
    {
        final long[] sizes = new long[5000];
        Arrays.fill(sizes, 4);
        final BucketPlan plan = BucketPlan.of(sizes, 1024, 4096);
        assertEquals(6, plan.bucketCount());
        assertEquals(1024, plan.bytes(0));
        for (int b = 1; b < 5; b++)
        {
            assertEquals(4096, plan.bytes(b));
        }
        assertEquals(5000 * 4 - 1024 - 4 * 4096, plan.bytes(5));
        long total = 0;
        for (int b = 0; b < plan.bucketCount(); b++)
        {
            total += plan.bytes(b);
            assertTrue(plan.bytes(b) <= (b == 0 ? 1024 : 4096));
        }
        assertEquals(20_000, total);
    }

    /**
     * Whatever the caps, a gradient keeps its place in the layout (segment and offset), and no bucket crosses a
     * segment's end: what lets autotune change the buckets under the views a model holds.
     */
    @Test
    void everyPlanTilesTheSameSegmentsAndNoBucketCrossesOne()
    {
        final long[] sizes = {40, 0, 30, 70, 10, 50, 0, 20, 60};
        final long segmentMax = 100;
        final BucketPlan reference = BucketPlan.of(sizes, 1000, 1000, segmentMax);
        assertArrayEquals(new long[] {80, 60, 100, 40}, java.util.stream.IntStream.range(0, reference.segmentCount())
            .mapToLong(reference::segmentBytes).toArray());
        for (final long first : new long[] {1, 25, 60, 1000})
        {
            for (final long cap : new long[] {1, 30, 70, 100, 1000})
            {
                final BucketPlan plan = BucketPlan.of(sizes, first, cap, segmentMax);
                assertEquals(reference.segmentCount(), plan.segmentCount());
                for (int g = 0; g < sizes.length; g++)
                {
                    final int b = plan.bucketOf(g);
                    final int r = reference.bucketOf(g);
                    assertEquals(reference.segmentOf(r), plan.segmentOf(b), "gradient " + g + " caps " + first + "/" +
                        cap);
                    assertEquals(reference.startOf(r) + reference.offsetOf(g), plan.startOf(b) + plan.offsetOf(g),
                        "gradient " + g + " caps " + first + "/" + cap);
                }
                for (int b = 0; b < plan.bucketCount(); b++)
                {
                    assertTrue(plan.startOf(b) + plan.bytes(b) <= plan.segmentBytes(plan.segmentOf(b)),
                        "bucket " + b + " of " + plan);
                }
            }
        }
    }
}
