package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.agrona.UnsafeApi;

/**
 * Kernels for {@link DataType#INT8} and {@link DataType#UINT8}.
 * <p>
 * Sum and product keep the low 8 bits, which are the same bits whether the operands are read as signed or unsigned, so
 * both types share those loops; only max and min differ, comparing signed or unsigned.
 */
final class Int8Reducer extends AbstractReducer
{
    private final boolean unsigned;

    Int8Reducer(final DataType type, final ReduceOp op)
    {
        super(type, op);
        this.unsigned = type == DataType.UINT8;
    }

    @Override
    void reduce(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        switch (op)
        {
            case SUM -> sum(db, da, sb, sa, count);
            case PROD -> prod(db, da, sb, sa, count);
            case MAX -> {
                if (unsigned)
                {
                    maxUnsigned(db, da, sb, sa, count);
                }
                else
                {
                    max(db, da, sb, sa, count);
                }
            }
            case MIN -> {
                if (unsigned)
                {
                    minUnsigned(db, da, sb, sa, count);
                }
                else
                {
                    min(db, da, sb, sa, count);
                }
            }
            default -> throw unsupported(op);
        }
    }

    static void sum(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            UnsafeApi.putByte(db, da + i, (byte)(UnsafeApi.getByte(db, da + i) + UnsafeApi.getByte(sb, sa + i)));
        }
    }

    static void prod(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            UnsafeApi.putByte(db, da + i, (byte)(UnsafeApi.getByte(db, da + i) * UnsafeApi.getByte(sb, sa + i)));
        }
    }

    static void max(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            UnsafeApi.putByte(db, da + i, (byte)Math.max(UnsafeApi.getByte(db, da + i), UnsafeApi.getByte(sb, sa + i)));
        }
    }

    static void min(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            UnsafeApi.putByte(db, da + i, (byte)Math.min(UnsafeApi.getByte(db, da + i), UnsafeApi.getByte(sb, sa + i)));
        }
    }

    static void maxUnsigned(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final int a = UnsafeApi.getByte(db, da + i) & 0xFF;
            final int b = UnsafeApi.getByte(sb, sa + i) & 0xFF;
            UnsafeApi.putByte(db, da + i, (byte)Math.max(a, b));
        }
    }

    static void minUnsigned(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final int a = UnsafeApi.getByte(db, da + i) & 0xFF;
            final int b = UnsafeApi.getByte(sb, sa + i) & 0xFF;
            UnsafeApi.putByte(db, da + i, (byte)Math.min(a, b));
        }
    }
}
