package dev.hccl.training;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Fp8Floats;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * {@link Compression#fp8e4m3()} and {@link Compression#fp8e5m2()}: FP32 values scaled per bucket, narrowed to 8 bits,
 * all-reduced as such (each hop widens, adds in FP32 and narrows, saturating) and widened back.
 * <p>
 * The scale is delayed, as Transformer Engine's: it maps the bucket's largest magnitude on any rank in the previous
 * step, times the world size and a margin of one binade for growth, to the format's largest finite. So no partial sum
 * saturates, and a bucket of small gradients keeps as many bits as its own largest allow (a fixed scale would flush
 * it to zero). The first step learns the magnitude before it sends (a blocking all-reduce of one float).
 * <p>
 * Every step then all-reduces the step's largest magnitudes (MAX) as the bucket ends, in bucket order on every rank.
 * Where some rank's values did not fit the scale (they saturated), or one was an infinity or a NaN, every rank learns
 * it from that all-reduce and all-reduces the bucket again in FP32, whose values are still in place: the fallback
 * rule of the 16-bit compressions.
 */
final class Fp8Codec implements BucketCodec
{
    /**
     * Headroom of the delayed scale: a bucket's magnitudes may grow by up to this factor, less the rounding, from one
     * step to the next before the step falls back to FP32. One binade of the format's range.
     */
    private static final float MARGIN = 2f;

    private final Communicator comm;
    private final DataType wireType;
    private final int count;
    private final boolean average;
    private final float largest;
    /** How much a narrowed value may exceed its exact one: half a unit in the last place, relatively. */
    private final float rounding;
    /** The bucket as 8-bit values, reduced in place. */
    private final ByteBuffer wire;
    /** The largest magnitude, this rank's, then every rank's. */
    private final ByteBuffer magnitude = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
    /** This step's scale; 0 before the first step. Written and read by the thread that runs the step. */
    private float scale;
    /** This rank's largest magnitude in this step. */
    private float localMax;
    /** One writer (the thread that runs the bucket); read for metrics by any thread. */
    private volatile int fallbacks;

    /**
     * @param comm     the communicator.
     * @param wireType F8E4M3 or F8E5M2.
     * @param count    FP32 elements in the bucket.
     * @param average  whether the result is the mean rather than the sum.
     */
    Fp8Codec(final Communicator comm, final DataType wireType, final int count, final boolean average)
    {
        this.comm = comm;
        this.wireType = wireType;
        this.count = count;
        this.average = average;
        this.largest = wireType == DataType.FP8_E4M3 ? Fp8Floats.e4m3ToFloat(Fp8Floats.E4M3_MAX) :
            Fp8Floats.e5m2ToFloat(Fp8Floats.E5M2_MAX);
        this.rounding = wireType == DataType.FP8_E4M3 ? 1 + 0x1p-4f : 1 + 0x1p-3f;
        this.wire = ByteBuffer.allocateDirect(count).order(ByteOrder.nativeOrder());
    }

    @Override
    public CommFuture start(final ByteBuffer flat)
    {
        final FloatBuffer values = flat.asFloatBuffer();
        float max = 0;
        for (int i = 0; i < count; i++)
        {
            final float v = Math.abs(values.get(i));
            max = v > max || v != v ? v : max; // a NaN wins, and stays
        }
        localMax = max != max ? Float.POSITIVE_INFINITY : max; // MAX keeps an infinity on every rank

        if (scale == 0)
        {
            scaleFor(everyRanksMax(max)); // the first step: no magnitude known yet
        }
        if (wireType == DataType.FP8_E4M3)
        {
            narrowToE4m3(values, wire, count, scale);
        }
        else
        {
            narrowToE5m2(values, wire, count, scale);
        }
        return comm.allReduceAsync(wire, wire, count, wireType, ReduceOp.SUM);
    }

    @Override
    public void finish(final ByteBuffer flat)
    {
        final float all = everyRanksMax(localMax);
        // Every partial sum fits when each rank's narrowed values do, times the ranks: else some saturated.
        if (!Float.isFinite(all) || all * comm.worldSize() * rounding * scale > largest)
        {
            fallbacks++;
            comm.allReduce(flat, flat, count, DataType.FP32, average ? ReduceOp.AVG : ReduceOp.SUM);
        }
        else
        {
            final float back = (average ? 1.0f / comm.worldSize() : 1.0f) / scale;
            if (wireType == DataType.FP8_E4M3)
            {
                widenFromE4m3(wire, flat.asFloatBuffer(), count, back);
            }
            else
            {
                widenFromE5m2(wire, flat.asFloatBuffer(), count, back);
            }
        }
        scaleFor(all);
    }

    /** The largest of every rank's {@code mine}: a NaN or an infinity on any rank comes back as such. */
    private float everyRanksMax(final float mine)
    {
        magnitude.putFloat(0, mine);
        comm.allReduce(magnitude, magnitude, 1, DataType.FP32, ReduceOp.MAX);
        return magnitude.getFloat(0);
    }

    /** The scale that fits a largest magnitude {@code max}, for the next narrowing; kept when max tells nothing. */
    private void scaleFor(final float max)
    {
        if (Float.isFinite(max) && max > 0)
        {
            scale = largest / (max * comm.worldSize() * MARGIN);
        }
        else if (scale == 0)
        {
            scale = 1;
        }
    }

    // One method per format and direction, as HalfPrecisionCodec's, so that the JIT compiles each loop for itself.

    private static void narrowToE4m3(final FloatBuffer from, final ByteBuffer to, final int count, final float scale)
    {
        for (int i = 0; i < count; i++)
        {
            to.put(i, Fp8Floats.floatToE4m3(from.get(i) * scale));
        }
    }

    private static void narrowToE5m2(final FloatBuffer from, final ByteBuffer to, final int count, final float scale)
    {
        for (int i = 0; i < count; i++)
        {
            to.put(i, Fp8Floats.floatToE5m2(from.get(i) * scale));
        }
    }

    private static void widenFromE4m3(final ByteBuffer from, final FloatBuffer to, final int count, final float back)
    {
        for (int i = 0; i < count; i++)
        {
            to.put(i, Fp8Floats.e4m3ToFloat(from.get(i)) * back);
        }
    }

    private static void widenFromE5m2(final ByteBuffer from, final FloatBuffer to, final int count, final float back)
    {
        for (int i = 0; i < count; i++)
        {
            to.put(i, Fp8Floats.e5m2ToFloat(from.get(i)) * back);
        }
    }

    @Override
    public long wireBytes()
    {
        return count;
    }

    @Override
    public int fallbacks()
    {
        return fallbacks;
    }
}
