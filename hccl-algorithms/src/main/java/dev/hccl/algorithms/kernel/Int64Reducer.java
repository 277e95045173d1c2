package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.agrona.UnsafeApi;

/**
 * Kernels for {@link DataType#INT64}: Java {@code long} arithmetic wraps around on overflow, as two's complement C
 * does.
 */
final class Int64Reducer extends AbstractReducer
{
    Int64Reducer(final ReduceOp op)
    {
        super(DataType.INT64, op);
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
            final long a = UnsafeApi.getLong(db, da + o);
            final long b = UnsafeApi.getLong(sb, sa + o);
            UnsafeApi.putLong(db, da + o, a + b);
        }
    }

    static void prod(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 3;
            final long a = UnsafeApi.getLong(db, da + o);
            final long b = UnsafeApi.getLong(sb, sa + o);
            UnsafeApi.putLong(db, da + o, a * b);
        }
    }

    static void max(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 3;
            final long a = UnsafeApi.getLong(db, da + o);
            final long b = UnsafeApi.getLong(sb, sa + o);
            UnsafeApi.putLong(db, da + o, Math.max(a, b));
        }
    }

    static void min(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 3;
            final long a = UnsafeApi.getLong(db, da + o);
            final long b = UnsafeApi.getLong(sb, sa + o);
            UnsafeApi.putLong(db, da + o, Math.min(a, b));
        }
    }
}
