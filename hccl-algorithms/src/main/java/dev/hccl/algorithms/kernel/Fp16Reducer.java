package dev.hccl.algorithms.kernel;

import dev.hccl.api.HalfFloats;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.agrona.UnsafeApi;

/**
 * Kernels for {@link DataType#FP16}: both operands widen exactly to {@code float}, the operator runs in {@code float},
 * and the result rounds back to nearest even (overflowing to infinity, NaN staying a quiet NaN).
 * <p>
 * {@code float} has more than twice binary16's precision plus two bits, so for sum and product this double rounding
 * gives the same result as rounding the exact value once.
 */
final class Fp16Reducer extends AbstractReducer
{
    Fp16Reducer(final ReduceOp op)
    {
        super(DataType.FP16, op);
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
            final float a = HalfFloats.fp16ToFloat(UnsafeApi.getShort(db, da + o));
            final float b = HalfFloats.fp16ToFloat(UnsafeApi.getShort(sb, sa + o));
            UnsafeApi.putShort(db, da + o, HalfFloats.floatToFp16(a + b));
        }
    }

    static void prod(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 1;
            final float a = HalfFloats.fp16ToFloat(UnsafeApi.getShort(db, da + o));
            final float b = HalfFloats.fp16ToFloat(UnsafeApi.getShort(sb, sa + o));
            UnsafeApi.putShort(db, da + o, HalfFloats.floatToFp16(a * b));
        }
    }

    static void max(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 1;
            final float a = HalfFloats.fp16ToFloat(UnsafeApi.getShort(db, da + o));
            final float b = HalfFloats.fp16ToFloat(UnsafeApi.getShort(sb, sa + o));
            UnsafeApi.putShort(db, da + o, HalfFloats.floatToFp16(Math.max(a, b)));
        }
    }

    static void min(final Object db, final long da, final Object sb, final long sa, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final long o = (long)i << 1;
            final float a = HalfFloats.fp16ToFloat(UnsafeApi.getShort(db, da + o));
            final float b = HalfFloats.fp16ToFloat(UnsafeApi.getShort(sb, sa + o));
            UnsafeApi.putShort(db, da + o, HalfFloats.floatToFp16(Math.min(a, b)));
        }
    }

    /**
     * {@code x[i] = x[i] / divisor}: the quotient correctly rounded to {@code float}, then rounded to nearest even.
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
                final long o = offset + ((long)i << 1);
                UnsafeApi.putShort(
                    base, o, HalfFloats.floatToFp16(HalfFloats.fp16ToFloat(UnsafeApi.getShort(base, o)) * reciprocal));
            }
        }
        else if (divisor <= Reducers.MAX_EXACT_FLOAT_INT)
        {
            final float d = divisor;
            for (int i = 0; i < count; i++)
            {
                final long o = offset + ((long)i << 1);
                UnsafeApi.putShort(
                    base, o, HalfFloats.floatToFp16(HalfFloats.fp16ToFloat(UnsafeApi.getShort(base, o)) / d));
            }
        }
        else
        {
            // (float)divisor would not be exact; the double quotient rounded to float is the correctly rounded one.
            final double d = divisor;
            for (int i = 0; i < count; i++)
            {
                final long o = offset + ((long)i << 1);
                UnsafeApi.putShort(
                    base, o, HalfFloats.floatToFp16((float)(HalfFloats.fp16ToFloat(UnsafeApi.getShort(base, o)) / d)));
            }
        }
    }
}
