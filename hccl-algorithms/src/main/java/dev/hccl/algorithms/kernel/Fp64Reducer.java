package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.agrona.UnsafeApi;

/**
 * Kernels for {@link DataType#FP64}: Java {@code double} arithmetic (IEEE 754, round to nearest even).
 * <p>
 * Max and min use {@link Math#max(double, double)} and {@link Math#min(double, double)}: a NaN operand gives NaN, and
 * {@code +0.0} is greater than {@code -0.0}.
 */
final class Fp64Reducer extends AbstractReducer
{
    Fp64Reducer(final ReduceOp op)
    {
        super(DataType.FP64, op);
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
            final long o = (long)i << 3;
            final double a = UnsafeApi.getDouble(db, da + o);
            final double b = UnsafeApi.getDouble(sb, sa + o);
            UnsafeApi.putDouble(db, da + o, a + b);
        }
    }

    static void prod(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 3;
            final double a = UnsafeApi.getDouble(db, da + o);
            final double b = UnsafeApi.getDouble(sb, sa + o);
            UnsafeApi.putDouble(db, da + o, a * b);
        }
    }

    static void max(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 3;
            final double a = UnsafeApi.getDouble(db, da + o);
            final double b = UnsafeApi.getDouble(sb, sa + o);
            UnsafeApi.putDouble(db, da + o, Math.max(a, b));
        }
    }

    static void min(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 3;
            final double a = UnsafeApi.getDouble(db, da + o);
            final double b = UnsafeApi.getDouble(sb, sa + o);
            UnsafeApi.putDouble(db, da + o, Math.min(a, b));
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
            final double reciprocal = 1.0 / divisor;
            for (int i = 0; i < count; i++)
            {
                final long o = offset + ((long)i << 3);
                UnsafeApi.putDouble(base, o, UnsafeApi.getDouble(base, o) * reciprocal);
            }
        }
        else
        {
            final double d = divisor;
            for (int i = 0; i < count; i++)
            {
                final long o = offset + ((long)i << 3);
                UnsafeApi.putDouble(base, o, UnsafeApi.getDouble(base, o) / d);
            }
        }
    }
}
