package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.agrona.UnsafeApi;

/**
 * Kernels for {@link DataType#INT16}: arithmetic in {@code int}, truncated back to 16 bits, which wraps around
 * exactly as two's complement C does.
 */
final class Int16Reducer extends AbstractReducer
{
    Int16Reducer(final ReduceOp op)
    {
        super(DataType.INT16, op);
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
            final long o = (long)i << 1;
            final short a = UnsafeApi.getShort(db, da + o);
            final short b = UnsafeApi.getShort(sb, sa + o);
            UnsafeApi.putShort(db, da + o, (short)(a + b));
        }
    }

    static void prod(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 1;
            final short a = UnsafeApi.getShort(db, da + o);
            final short b = UnsafeApi.getShort(sb, sa + o);
            UnsafeApi.putShort(db, da + o, (short)(a * b));
        }
    }

    static void max(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 1;
            final short a = UnsafeApi.getShort(db, da + o);
            final short b = UnsafeApi.getShort(sb, sa + o);
            UnsafeApi.putShort(db, da + o, a >= b ? a : b);
        }
    }

    static void min(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 1;
            final short a = UnsafeApi.getShort(db, da + o);
            final short b = UnsafeApi.getShort(sb, sa + o);
            UnsafeApi.putShort(db, da + o, a <= b ? a : b);
        }
    }
}
