package dev.hccl.training;

import dev.hccl.api.CommFuture;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.IntFunction;

/**
 * The buckets of one {@link BucketPlan}: each a slice of one of the {@link GradientSync}'s segments, with its codec
 * and the state of the step under way. Autotune replaces a set by another over the same segments between steps.
 * Not thread-safe: the helper calls it under its lock.
 */
final class BucketSet
{
    /** One bucket: its slice, its gradients and its codec, with the state of the current step. */
    static final class Bucket
    {
        final ByteBuffer flat;
        final int[] members;
        /** Null for a bucket of zero-length gradients: there is nothing to send, on any rank. */
        final BucketCodec codec;
        int pending;
        CommFuture future;

        Bucket(final ByteBuffer flat, final int[] members, final BucketCodec codec)
        {
            this.flat = flat;
            this.members = members;
            this.codec = codec;
            this.pending = members.length;
        }
    }

    final BucketPlan plan;
    final Bucket[] buckets;
    private int nextToStart;

    /**
     * @param plan     the buckets.
     * @param segments the helper's segments, {@link BucketPlan#segmentCount()} of them.
     * @param codecOf  makes the codec of a bucket of that many bytes, more than 0.
     */
    BucketSet(final BucketPlan plan, final ByteBuffer[] segments, final IntFunction<BucketCodec> codecOf)
    {
        this.plan = plan;
        this.buckets = new Bucket[plan.bucketCount()];
        for (int b = 0; b < buckets.length; b++)
        {
            final int size = (int)plan.bytes(b);
            final ByteBuffer flat = segments[plan.segmentOf(b)].slice((int)plan.startOf(b), size)
                .order(ByteOrder.nativeOrder());
            buckets[b] = new Bucket(flat, plan.members(b), size == 0 ? null : codecOf.apply(size));
        }
    }

    /** A gradient of the current step is ready: one fewer pending in its bucket. */
    void marked(final int gradient)
    {
        buckets[plan.bucketOf(gradient)].pending--;
    }

    /** Starts, in bucket order, the buckets that are complete and whose predecessors started. */
    void startComplete()
    {
        while (nextToStart < buckets.length && buckets[nextToStart].pending == 0)
        {
            final Bucket b = buckets[nextToStart];
            if (b.codec != null)
            {
                b.future = b.codec.start(b.flat);
            }
            nextToStart++;
        }
    }

    /** Waits for the collectives under way, ignoring their failures, and makes every bucket pending again. */
    void reset()
    {
        for (final Bucket b : buckets)
        {
            joinQuietly(b);
            b.pending = b.members.length;
        }
        nextToStart = 0;
    }

    /** Waits for the collectives under way, ignoring their failures. */
    void joinAll()
    {
        for (final Bucket b : buckets)
        {
            joinQuietly(b);
        }
    }

    /**
     * @return the codecs' fallbacks since the set was made.
     */
    int fallbacks()
    {
        int total = 0;
        for (final Bucket b : buckets)
        {
            total += b.codec == null ? 0 : b.codec.fallbacks();
        }
        return total;
    }

    /**
     * @return the payload this rank puts into a step's collectives.
     */
    long wireBytes()
    {
        long wire = 0;
        for (final Bucket b : buckets)
        {
            wire += b.codec == null ? 0 : b.codec.wireBytes();
        }
        return wire;
    }

    private static void joinQuietly(final Bucket b)
    {
        final CommFuture f = b.future;
        b.future = null;
        if (f != null)
        {
            try
            {
                f.join();
            }
            catch (final RuntimeException alreadyReported)
            {
                // The step's caller got the first failure; the others are its consequences.
            }
        }
    }
}
