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
 * {@link GradientSync} builds its buckets from it; it is public so that a tool can tell the buckets of a model
 * without a communicator.
 */
public final class BucketPlan
{
    private final int[] bucketOf;
    private final long[] offsetOf;
    private final int[][] members;
    private final long[] bytes;

    private BucketPlan(final int[] bucketOf, final long[] offsetOf, final int[][] members, final long[] bytes)
    {
        this.bucketOf = bucketOf;
        this.offsetOf = offsetOf;
        this.members = members;
        this.bytes = bytes;
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
        if (firstBucketBytes < 1 || bucketCapBytes < 1 || Arrays.stream(gradientBytes).anyMatch(b -> b < 0))
        {
            throw new IllegalArgumentException("bucket caps must be at least 1 byte and gradient sizes not negative, " +
                "got " + firstBucketBytes + ", " + bucketCapBytes + " and " + Arrays.toString(gradientBytes));
        }
        final int n = gradientBytes.length;
        final int[] bucketOf = new int[n];
        final long[] offsetOf = new long[n];
        final List<int[]> members = new ArrayList<>();
        final List<Long> sizes = new ArrayList<>();
        final List<Integer> current = new ArrayList<>();
        long filled = 0;
        long cap = firstBucketBytes;
        for (int g = n - 1; g >= 0; g--)
        {
            final long size = gradientBytes[g];
            if (!current.isEmpty() && filled + size > cap)
            {
                members.add(current.stream().mapToInt(Integer::intValue).toArray());
                sizes.add(filled);
                current.clear();
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
            sizes.add(filled);
        }
        return new BucketPlan(bucketOf, offsetOf, members.toArray(new int[0][]),
            sizes.stream().mapToLong(Long::longValue).toArray());
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

    @Override
    public String toString()
    {
        return "BucketPlan" + Arrays.deepToString(members);
    }
}
