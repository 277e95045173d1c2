package dev.hccl.training;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * {@link Compression#topK}: with error feedback. Each step this rank adds its residual to the bucket, sends the
 * {@code k} values largest in magnitude as (index, value) pairs (an INT32 and an FP32, 8 bytes) through an
 * all-gather, and keeps the others as its residual for the next step. Every rank then sums the pairs of all ranks in
 * rank order into a zeroed bucket, so all hold the same bits.
 */
final class TopKCodec implements BucketCodec
{
    private static final int PAIR_BYTES = 8;

    private final Communicator comm;
    private final int count;
    private final int k;
    private final boolean average;
    /** What this rank has not sent yet, FP32, native order. */
    private final FloatBuffer residual;
    private final ByteBuffer pairs;
    private final ByteBuffer gathered;
    private final int[] picked;
    /** Shared by the buckets of one {@link GradientSync}, whose codecs start one at a time. */
    private final TopKSelector selector;

    /**
     * @param comm     the communicator.
     * @param count    FP32 elements in the bucket, at least 1.
     * @param fraction of them to send each step.
     * @param average  whether the result is the mean rather than the sum.
     * @param selector the selection scratch this codec may use.
     */
    TopKCodec(
        final Communicator comm, final int count, final double fraction, final boolean average,
        final TopKSelector selector)
    {
        this.comm = comm;
        this.count = count;
        this.k = elementsSent(count, fraction);
        final long gatheredBytes = (long)k * PAIR_BYTES * comm.worldSize();
        if (gatheredBytes > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("GradientSync.build on rank " + comm.rank() + ": topK(" + fraction +
                ") over " + comm.worldSize() + " ranks gathers " + gatheredBytes + " bytes for a bucket of " + count +
                " elements, more than a buffer holds (2 GiB); lower bucketCapBytes or the fraction");
        }
        this.average = average;
        this.residual = ByteBuffer.allocateDirect(Math.multiplyExact(count, 4)).order(ByteOrder.nativeOrder())
            .asFloatBuffer();
        this.pairs = ByteBuffer.allocateDirect(Math.multiplyExact(k, PAIR_BYTES)).order(ByteOrder.nativeOrder());
        this.gathered = ByteBuffer.allocateDirect(Math.multiplyExact(pairs.capacity(), comm.worldSize()))
            .order(ByteOrder.nativeOrder());
        this.picked = new int[k];
        this.selector = selector;
    }

    /**
     * @param count    elements in a bucket, at least 1.
     * @param fraction the setting.
     * @return how many a rank sends each step: {@code ceil(fraction * count)}, at least 1.
     */
    static int elementsSent(final int count, final double fraction)
    {
        return (int)Math.max(1, Math.min(count, Math.ceil(fraction * count)));
    }

    @Override
    public CommFuture start(final ByteBuffer flat)
    {
        final FloatBuffer values = flat.asFloatBuffer();
        for (int i = 0; i < count; i++)
        {
            values.put(i, values.get(i) + residual.get(i));
            residual.put(i, values.get(i));
        }
        selector.select(values, count, k, picked);
        for (int j = 0; j < k; j++)
        {
            final int index = picked[j];
            pairs.putInt(j * PAIR_BYTES, index);
            pairs.putFloat(j * PAIR_BYTES + 4, values.get(index));
            residual.put(index, 0.0f);
        }
        return comm.allGatherAsync(pairs, gathered, 2L * k, DataType.INT32);
    }

    @Override
    public void finish(final ByteBuffer flat)
    {
        final FloatBuffer values = flat.asFloatBuffer();
        for (int i = 0; i < count; i++)
        {
            values.put(i, 0.0f);
        }
        final int ranks = comm.worldSize();
        for (int p = 0; p < ranks * k; p++)
        {
            final int index = gathered.getInt(p * PAIR_BYTES);
            if (index < 0 || index >= count)
            {
                throw new HcclException(ErrorCode.E_INTERNAL, "GradientSync on rank " + comm.rank() +
                    ": rank " + p / k + " sent top-k index " + index + " for a bucket of " + count +
                    " elements; its GradientSync differs from this rank's");
            }
            values.put(index, values.get(index) + gathered.getFloat(p * PAIR_BYTES + 4));
        }
        if (average)
        {
            for (int i = 0; i < count; i++)
            {
                values.put(i, values.get(i) / ranks);
            }
        }
    }

    @Override
    public long wireBytes()
    {
        return (long)k * PAIR_BYTES;
    }

    /**
     * @return this rank's residual: what it has not sent yet, element by element.
     */
    FloatBuffer residual()
    {
        return residual.duplicate();
    }
}
