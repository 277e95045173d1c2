package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.agrona.UnsafeApi;

/**
 * Kernels for {@link DataType#INT32}: Java {@code int} arithmetic wraps around on overflow, as two's complement C does.
 */
final class Int32Reducer extends AbstractReducer
{
    Int32Reducer(final ReduceOp op)
    {
        super(DataType.INT32, op);
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
            final int a = UnsafeApi.getInt(db, da + o);
            final int b = UnsafeApi.getInt(sb, sa + o);
            UnsafeApi.putInt(db, da + o, a + b);
        }
    }

    static void prod(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 2;
            final int a = UnsafeApi.getInt(db, da + o);
            final int b = UnsafeApi.getInt(sb, sa + o);
            UnsafeApi.putInt(db, da + o, a * b);
        }
    }

    static void max(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 2;
            final int a = UnsafeApi.getInt(db, da + o);
            final int b = UnsafeApi.getInt(sb, sa + o);
            UnsafeApi.putInt(db, da + o, Math.max(a, b));
        }
    }

    static void min(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 2;
            final int a = UnsafeApi.getInt(db, da + o);
            final int b = UnsafeApi.getInt(sb, sa + o);
            UnsafeApi.putInt(db, da + o, Math.min(a, b));
        }
    }
}
