package dev.hccl.training;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.HalfFloats;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.ShortBuffer;

/**
 * {@link Compression#fp16()} and {@link Compression#bf16()}: FP32 values divided by the world size, narrowed to 16
 * bits and all-reduced as such (each hop widens, adds in FP32 and narrows), then widened back. Dividing first keeps
 * every partial sum within the largest value a rank sent. Where the reduced bucket still holds an infinity or a NaN,
 * which all ranks see alike since they hold the same bits, every rank all-reduces the bucket again in FP32.
 */
final class HalfPrecisionCodec implements BucketCodec
{
    private final Communicator comm;
    private final DataType wireType;
    private final int count;
    private final boolean average;
    /** The bucket as 16-bit values, reduced in place. */
    private final ByteBuffer wire;
    /** Bits of the exponent field, all set in an infinity or a NaN. */
    private final int specialExponent;
    /** One writer (the thread that runs the bucket's all-reduce); read for metrics by any thread. */
    private volatile int fallbacks;

    /**
     * @param comm     the communicator.
     * @param wireType FP16 or BF16.
     * @param count    FP32 elements in the bucket.
     * @param average  whether the result is the mean rather than the sum.
     */
    HalfPrecisionCodec(final Communicator comm, final DataType wireType, final int count, final boolean average)
    {
        this.comm = comm;
        this.wireType = wireType;
        this.count = count;
        this.average = average;
        this.wire = ByteBuffer.allocateDirect(Math.multiplyExact(count, 2)).order(ByteOrder.nativeOrder());
        this.specialExponent = wireType == DataType.FP16 ? 0x7C00 : 0x7F80;
    }

    @Override
    public CommFuture start(final ByteBuffer flat)
    {
        final FloatBuffer values = flat.asFloatBuffer();
        final ShortBuffer halves = wire.asShortBuffer();
        final float scale = 1.0f / comm.worldSize();
        if (wireType == DataType.FP16)
        {
            narrowToFp16(values, halves, count, scale);
        }
        else
        {
            narrowToBf16(values, halves, count, scale);
        }
        return comm.allReduceAsync(wire, wire, count, wireType, ReduceOp.SUM);
    }

    @Override
    public void finish(final ByteBuffer flat)
    {
        final ShortBuffer halves = wire.asShortBuffer();
        for (int i = 0; i < count; i++)
        {
            if ((halves.get(i) & specialExponent) == specialExponent)
            {
                fallbacks++;
                comm.allReduce(flat, flat, count, DataType.FP32, average ? ReduceOp.AVG : ReduceOp.SUM);
                return;
            }
        }
        final FloatBuffer values = flat.asFloatBuffer();
        final float scale = average ? 1.0f : comm.worldSize();
        if (wireType == DataType.FP16)
        {
            widenFromFp16(halves, values, count, scale);
        }
        else
        {
            widenFromBf16(halves, values, count, scale);
        }
    }

    // One method per format and direction, so that the JIT compiles each loop for itself: a method holding both
    // formats' loops ran the second format 2.5-3x slower in a JVM that had used the first.

    private static void narrowToFp16(final FloatBuffer from, final ShortBuffer to, final int count, final float scale)
    {
        for (int i = 0; i < count; i++)
        {
            to.put(i, HalfFloats.floatToFp16(from.get(i) * scale));
        }
    }

    private static void narrowToBf16(final FloatBuffer from, final ShortBuffer to, final int count, final float scale)
    {
        for (int i = 0; i < count; i++)
        {
            to.put(i, HalfFloats.floatToBf16(from.get(i) * scale));
        }
    }

    private static void widenFromFp16(final ShortBuffer from, final FloatBuffer to, final int count, final float scale)
    {
        for (int i = 0; i < count; i++)
        {
            to.put(i, HalfFloats.fp16ToFloat(from.get(i)) * scale);
        }
    }

    private static void widenFromBf16(final ShortBuffer from, final FloatBuffer to, final int count, final float scale)
    {
        for (int i = 0; i < count; i++)
        {
            to.put(i, HalfFloats.bf16ToFloat(from.get(i)) * scale);
        }
    }

    @Override
    public long wireBytes()
    {
        return 2L * count;
    }

    @Override
    public int fallbacks()
    {
        return fallbacks;
    }
}
