package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.Fp8Floats;
import dev.hccl.api.ReduceOp;
import org.agrona.UnsafeApi;

/**
 * Kernels for {@link DataType#FP8_E4M3} and {@link DataType#FP8_E5M2}: both operands widen exactly to {@code float},
 * the operator runs in {@code float}, and the result rounds back to nearest even, a result beyond the largest finite
 * (an infinity too) saturating to it, as NCCL's FP8 kernels do ({@link Fp8Floats}). A NaN result is the format's one
 * canonical NaN ({@code 0x7F} for E4M3, {@code 0x7E} for E5M2), so every rank and every JIT state gives the same
 * bits.
 * <p>
 * An element has only 256 values, so the kernel is a lookup in a table of all 65,536 pairs of operands, built from
 * that definition on the kernel's first use (64 KiB per type and operator): one load per element instead of two
 * widenings and a rounding. {@link #combine} is the definition, element by element.
 */
final class Fp8Reducer extends AbstractReducer
{
    private static final int VALUES = 256;

    /** Result bits by {@code dst << 8 | src}; null until first use (racing threads build equal tables). */
    private volatile byte[] table;

    Fp8Reducer(final DataType type, final ReduceOp op)
    {
        super(checkFp8(type), op);
        if (op == ReduceOp.AVG)
        {
            throw unsupported(op);
        }
    }

    @Override
    void reduce(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        final byte[] t = table();
        for (int i = 0; i < count; i++)
        {
            final int a = UnsafeApi.getByte(db, da + i) & 0xFF;
            final int b = UnsafeApi.getByte(sb, sa + i) & 0xFF;
            UnsafeApi.putByte(db, da + i, t[a << 8 | b]);
        }
    }

    private byte[] table()
    {
        byte[] t = table;
        if (t == null)
        {
            t = new byte[VALUES * VALUES];
            for (int a = 0; a < VALUES; a++)
            {
                for (int b = 0; b < VALUES; b++)
                {
                    t[a << 8 | b] = combine(type, op, (byte)a, (byte)b);
                }
            }
            table = t;
        }
        return t;
    }

    /**
     * One element of the reduction, by definition: {@code a op b} in {@code float}, narrowed.
     *
     * @param type {@link DataType#FP8_E4M3} or {@link DataType#FP8_E5M2}.
     * @param op   SUM, PROD, MAX or MIN.
     * @param a    the first operand's bits.
     * @param b    the second operand's bits.
     * @return the result's bits.
     */
    static byte combine(final DataType type, final ReduceOp op, final byte a, final byte b)
    {
        final float x = widen(type, a);
        final float y = widen(type, b);
        return narrow(type, switch (op)
        {
            case SUM -> x + y;
            case PROD -> x * y;
            case MAX -> Math.max(x, y);
            case MIN -> Math.min(x, y);
            case AVG -> throw unsupported(op);
        });
    }

    /**
     * {@code x[i] = x[i] / divisor}: the quotient correctly rounded to {@code float}, then narrowed, as
     * {@link Bf16Reducer#divide} does; through a table of the 256 quotients.
     *
     * @param type    {@link DataType#FP8_E4M3} or {@link DataType#FP8_E5M2}.
     * @param base    null for off-heap memory, else the array.
     * @param offset  address or array offset of the first element.
     * @param count   elements.
     * @param divisor positive divisor.
     */
    static void divide(final DataType type, final Object base, final long offset, final int count, final int divisor)
    {
        final byte[] quotients = new byte[VALUES];
        for (int bits = 0; bits < VALUES; bits++)
        {
            final float x = widen(type, (byte)bits);
            // (float)divisor is exact up to 2^24; beyond it, the double quotient rounded to float is the correct one.
            final float quotient = divisor <= Reducers.MAX_EXACT_FLOAT_INT ? x / divisor : (float)(x / (double)divisor);
            quotients[bits] = narrow(type, quotient);
        }
        for (int i = 0; i < count; i++)
        {
            UnsafeApi.putByte(base, offset + i, quotients[UnsafeApi.getByte(base, offset + i) & 0xFF]);
        }
    }

    private static float widen(final DataType type, final byte bits)
    {
        return type == DataType.FP8_E4M3 ? Fp8Floats.e4m3ToFloat(bits) : Fp8Floats.e5m2ToFloat(bits);
    }

    private static byte narrow(final DataType type, final float value)
    {
        if (Float.isNaN(value))
        {
            return type == DataType.FP8_E4M3 ? Fp8Floats.E4M3_NAN : Fp8Floats.E5M2_NAN;
        }
        return type == DataType.FP8_E4M3 ? Fp8Floats.floatToE4m3(value) : Fp8Floats.floatToE5m2(value);
    }

    private static DataType checkFp8(final DataType type)
    {
        if (type != DataType.FP8_E4M3 && type != DataType.FP8_E5M2)
        {
            throw new IllegalArgumentException("not an FP8 type: " + type);
        }
        return type;
    }
}
