package dev.hccl.training;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which bucket each gradient belongs to, as PyTorch DDP assigns them: in reverse order of registration (the order in
 * which a backward pass usually produces them), the first bucket up to {@code firstBucketBytes} and each next one up
 * to {@code bucketCapBytes}. A gradient larger than the cap has a bucket of its own; zero-length gradients join the
 * bucket being filled. Within a bucket the gradients lie one after another in the order they were taken.
 * <p>
 * Whatever the caps, the buckets tile one layout: the gradients in reverse order of registration, one after another,
 * in segments of at most 2 GiB (what one buffer holds; a segment ends where the next gradient would take it past).
 * A bucket never crosses a segment's end, so a bucket is always a slice of one segment, and the gradients keep their
 * place in the layout when the caps change: {@link GradientSync}'s autotune rebuilds its buckets over the same
 * buffers, and the gradient views a model holds stay valid.
 * <p>
 * {@link GradientSync} builds its buckets from it; it is public so that a tool can tell the buckets of a model
 * without a communicator.
 */
public final class BucketPlan
{
    private final int[] bucketOf;
    private final long[] offsetOf;
    private final int[][] members;
    private final long[] bytes;
    private final long[] segmentBytes;
    private final int[] segmentOfBucket;
    private final long[] startOfBucket;

    /** The most bytes of a segment: a direct buffer's most. */
    static final long SEGMENT_MAX_BYTES = Integer.MAX_VALUE;

    private BucketPlan(
        final int[] bucketOf, final long[] offsetOf, final int[][] members, final long[] bytes,
        final long[] segmentBytes, final int[] segmentOfBucket, final long[] startOfBucket)
    {
        this.bucketOf = bucketOf;
        this.offsetOf = offsetOf;
        this.members = members;
        this.bytes = bytes;
        this.segmentBytes = segmentBytes;
        this.segmentOfBucket = segmentOfBucket;
        this.startOfBucket = startOfBucket;
    }

    /**
     * @param gradientBytes    each gradient's size, in registration order.
     * @param firstBucketBytes the first bucket's cap, at least 1.
     * @param bucketCapBytes   every other bucket's cap, at least 1.
     * @return the plan.
     * @throws IllegalArgumentException when a size is negative or a cap below 1.
     */
    public static BucketPlan of(final long[] gradientBytes, final long firstBucketBytes, final long bucketCapBytes)
    {
        return of(gradientBytes, firstBucketBytes, bucketCapBytes, SEGMENT_MAX_BYTES);
    }

    /** As {@link #of(long[], long, long)} with segments of at most {@code segmentMaxBytes}, for tests. */
    static BucketPlan of(
        final long[] gradientBytes, final long firstBucketBytes, final long bucketCapBytes, final long segmentMaxBytes)
    {
        if (firstBucketBytes < 1 || bucketCapBytes < 1 || Arrays.stream(gradientBytes).anyMatch(b -> b < 0))
        {
            throw new IllegalArgumentException("bucket caps must be at least 1 byte and gradient sizes not negative, " +
                "got " + firstBucketBytes + ", " + bucketCapBytes + " and " + Arrays.toString(gradientBytes));
        }
        final int n = gradientBytes.length;
        final int[] segmentOf = new int[n];
        final List<Long> segments = new ArrayList<>();
        long segmentFilled = 0;
        for (int g = n - 1; g >= 0; g--)
        {
            if (g < n - 1 && segmentFilled + gradientBytes[g] > segmentMaxBytes)
            {
                segments.add(segmentFilled);
                segmentFilled = 0;
            }
            segmentOf[g] = segments.size();
            segmentFilled += gradientBytes[g];
        }
        segments.add(segmentFilled);
        final int[] bucketOf = new int[n];
        final long[] offsetOf = new long[n];
        final List<int[]> members = new ArrayList<>();
        final List<long[]> buckets = new ArrayList<>(); // bytes, segment, start in the segment
        final List<Integer> current = new ArrayList<>();
        long filled = 0;
        long start = 0;
        long cap = firstBucketBytes;
        for (int g = n - 1; g >= 0; g--)
        {
            final long size = gradientBytes[g];
            final boolean newSegment = g < n - 1 && segmentOf[g] != segmentOf[g + 1];
            if (!current.isEmpty() && (filled + size > cap || newSegment))
            {
                members.add(current.stream().mapToInt(Integer::intValue).toArray());
                buckets.add(new long[] {filled, segmentOf[g + 1], start});
                current.clear();
                start = newSegment ? 0 : start + filled;
                filled = 0;
                cap = bucketCapBytes;
            }
            bucketOf[g] = members.size();
            offsetOf[g] = filled;
            current.add(g);
            filled += size;
        }
        if (!current.isEmpty())
        {
            members.add(current.stream().mapToInt(Integer::intValue).toArray());
            buckets.add(new long[] {filled, segmentOf[0], start});
        }
        return new BucketPlan(bucketOf, offsetOf, members.toArray(new int[0][]),
            buckets.stream().mapToLong(b -> b[0]).toArray(), segments.stream().mapToLong(Long::longValue).toArray(),
            buckets.stream().mapToInt(b -> (int)b[1]).toArray(), buckets.stream().mapToLong(b -> b[2]).toArray());
    }

    /**
     * @return how many buckets.
     */
    public int bucketCount()
    {
        return members.length;
    }

    /**
     * @param gradient a gradient, in registration order.
     * @return its bucket.
     */
    public int bucketOf(final int gradient)
    {
        return bucketOf[gradient];
    }

    /**
     * @param gradient a gradient.
     * @return where its bytes start in its bucket.
     */
    public long offsetOf(final int gradient)
    {
        return offsetOf[gradient];
    }

    /**
     * @param bucket a bucket.
     * @return its gradients, in the order they lie in it.
     */
    public int[] members(final int bucket)
    {
        return members[bucket].clone();
    }

    /**
     * @param bucket a bucket.
     * @return its size in bytes.
     */
    public long bytes(final int bucket)
    {
        return bytes[bucket];
    }

    /**
     * @return how many segments the layout has: 1 up to 2 GiB of gradients.
     */
    public int segmentCount()
    {
        return segmentBytes.length;
    }

    /**
     * @param segment a segment.
     * @return its size in bytes, the same for every plan over the same gradients.
     */
    public long segmentBytes(final int segment)
    {
        return segmentBytes[segment];
    }

    /**
     * @param bucket a bucket.
     * @return the segment it lies in.
     */
    public int segmentOf(final int bucket)
    {
        return segmentOfBucket[bucket];
    }

    /**
     * @param bucket a bucket.
     * @return where it starts in its segment.
     */
    public long startOf(final int bucket)
    {
        return startOfBucket[bucket];
    }

    /**
     * @param other a plan over the same gradients.
     * @return whether both cut the layout into the same buckets, so that both send alike.
     */
    boolean sameBuckets(final BucketPlan other)
    {
        return Arrays.equals(bytes, other.bytes) && Arrays.equals(segmentOfBucket, other.segmentOfBucket);
    }

    @Override
    public String toString()
    {
        return "BucketPlan" + Arrays.deepToString(members);
    }
}
