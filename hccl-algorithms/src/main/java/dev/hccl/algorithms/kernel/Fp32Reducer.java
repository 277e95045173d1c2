package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.agrona.UnsafeApi;

/**
 * Kernels for {@link DataType#FP32}: Java {@code float} arithmetic (IEEE 754, round to nearest even).
 * <p>
 * Max and min use {@link Math#max(float, float)} and {@link Math#min(float, float)}: a NaN operand gives NaN, and
 * {@code +0.0} is greater than {@code -0.0}.
 */
final class Fp32Reducer extends AbstractReducer
{
    Fp32Reducer(final ReduceOp op)
    {
        super(DataType.FP32, op);
    }

    @Override
    void reduce(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        switch (op)
        {
            case SUM -> sum(db, da, sb, sa, count);
            case PROD -> prod(db, da, sb, sa, count);
            case MAX -> max(db, da, sb, sa, count);
            case MIN -> min(db, da, sb, sa, count);
            default -> throw unsupported(op);
        }
    }

    static void sum(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 2;
            final float a = UnsafeApi.getFloat(db, da + o);
            final float b = UnsafeApi.getFloat(sb, sa + o);
            UnsafeApi.putFloat(db, da + o, a + b);
        }
    }

    static void prod(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 2;
            final float a = UnsafeApi.getFloat(db, da + o);
            final float b = UnsafeApi.getFloat(sb, sa + o);
            UnsafeApi.putFloat(db, da + o, a * b);
        }
    }

    static void max(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 2;
            final float a = UnsafeApi.getFloat(db, da + o);
            final float b = UnsafeApi.getFloat(sb, sa + o);
            UnsafeApi.putFloat(db, da + o, Math.max(a, b));
        }
    }

    static void min(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 2;
            final float a = UnsafeApi.getFloat(db, da + o);
            final float b = UnsafeApi.getFloat(sb, sa + o);
            UnsafeApi.putFloat(db, da + o, Math.min(a, b));
        }
    }

    /**
     * {@code x[i] = x[i] / divisor}, correctly rounded.
     *
     * @param base    null for off-heap memory, else the array.
     * @param offset  address or array offset of the first element.
     * @param count   elements.
     * @param divisor positive divisor.
     */
    static void divide(final Object base, final long offset, final int count, final int divisor)
    {
        if ((divisor & (divisor - 1)) == 0)
        {
            // x * 2^-k and x / 2^k round the same exact value, so they are bit-identical; multiplying is much cheaper.
            final float reciprocal = 1.0f / divisor;
            for (int i = 0; i < count; i++)
            {
                final long o = offset + ((long)i << 2);
                UnsafeApi.putFloat(base, o, UnsafeApi.getFloat(base, o) * reciprocal);
            }
        }
        else if (divisor <= Reducers.MAX_EXACT_FLOAT_INT)
        {
            final float d = divisor;
            for (int i = 0; i < count; i++)
            {
                final long o = offset + ((long)i << 2);
                UnsafeApi.putFloat(base, o, UnsafeApi.getFloat(base, o) / d);
            }
        }
        else
        {
            // (float)divisor would not be exact; the double quotient rounded to float is still correctly rounded.
            final double d = divisor;
            for (int i = 0; i < count; i++)
            {
                final long o = offset + ((long)i << 2);
                UnsafeApi.putFloat(base, o, (float)(UnsafeApi.getFloat(base, o) / d));
            }
        }
    }
}
