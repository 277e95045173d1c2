package dev.hccl.algorithms;

import dev.hccl.api.DataType;
import dev.hccl.api.Fp8Floats;
import dev.hccl.api.HalfFloats;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * Test support: elements of every {@link DataType} read and written as plain numbers, the reference reduction computed
 * in {@code long} (integers, which wrap as in C) or {@code double} (floating types), and inputs chosen so that the
 * exact result of a floating-point reduction does not depend on the order in which it is computed.
 */
final class Elements
{
    /** Values for floating-point PROD: every product of them is a power of two, exact in every floating type. */
    private static final double[] PROD_FACTORS = { 1, -1, 2, 0.5 };
    /** Small integers for floating-point SUM: partial sums of 9 ranks stay exact even in bfloat16 (8 bits). */
    private static final int SUM_RANGE = 8;
    /**
     * FP8 holds every integer only up to 8 (E5M2) or 16 (E4M3): its SUM inputs are -1, 0 or 1, and 0 from the ninth
     * rank on, so that every partial sum, in any order, is an integer within [-8, 8]. Its PROD factors from the ninth
     * rank on are 1 or -1, so that every partial product is 2^k with |k| <= 8, within E4M3's range.
     */
    private static final int FP8_EXACT_RANKS = 8;
    private static final double[] FP8_LATE_PROD_FACTORS = { 1, -1 };

    private Elements()
    {
    }

    /** A little-endian (native) view of a byte array. */
    static ByteBuffer wrap(final byte[] bytes)
    {
        return ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
    }

    /**
     * Fills {@code count} elements of rank {@code rank}'s input with values for which {@code op} reduces exactly (see
     * the class comment); with {@code exact} false, floating types get arbitrary finite values instead (for determinism
     * tests).
     */
    static byte[] inputs(final DataType type, final ReduceOp op, final int count, final Random random,
        final boolean exact, final int rank)
    {
        final boolean fp8 = type == DataType.FP8_E4M3 || type == DataType.FP8_E5M2;
        final boolean late = fp8 && rank >= FP8_EXACT_RANKS;
        final byte[] bytes = new byte[count * type.size()];
        final ByteBuffer buf = wrap(bytes);
        if (!type.isFloatingPoint())
        {
            random.nextBytes(bytes);
            return bytes;
        }
        for (int i = 0; i < count; i++)
        {
            final double value;
            if (!exact)
            {
                value = random.nextGaussian() * (fp8 ? 10 : 1000);
            }
            else if (op == ReduceOp.PROD)
            {
                final double[] factors = late ? FP8_LATE_PROD_FACTORS : PROD_FACTORS;
                value = factors[random.nextInt(factors.length)];
            }
            else if (op == ReduceOp.SUM || op == null)
            {
                final int range = !fp8 ? SUM_RANGE : late ? 0 : 1;
                value = random.nextInt(2 * range + 1) - range;
            }
            else
            {
                value = random.nextGaussian() * (fp8 ? 100 : 1e4);
            }
            putFloating(type, buf, i, value);
            if (getFloating(type, buf, i) == 0 && op != ReduceOp.SUM && op != null)
            {
                // MAX and MIN are exact for any value; avoid -0.0, whose order against +0.0 kernels need not agree on.
                putFloating(type, buf, i, 1);
            }
        }
        return bytes;
    }

    /** Writes a floating-point value, which the caller picked to be representable (or rounds to nearest even). */
    static void putFloating(final DataType type, final ByteBuffer buf, final int index, final double value)
    {
        switch (type)
        {
            case FP16 -> buf.putShort(index * 2, HalfFloats.floatToFp16((float)value));
            case BF16 -> buf.putShort(index * 2, HalfFloats.floatToBf16((float)value));
            case FP32 -> buf.putFloat(index * 4, (float)value);
            case FP64 -> buf.putDouble(index * 8, value);
            case FP8_E4M3 -> buf.put(index, Fp8Floats.floatToE4m3((float)value));
            case FP8_E5M2 -> buf.put(index, Fp8Floats.floatToE5m2((float)value));
            default -> throw new IllegalArgumentException(type.toString());
        }
    }

    /** Reads a floating-point element as a double. */
    static double getFloating(final DataType type, final ByteBuffer buf, final int index)
    {
        return switch (type)
        {
            case FP16 -> HalfFloats.fp16ToFloat(buf.getShort(index * 2));
            case BF16 -> HalfFloats.bf16ToFloat(buf.getShort(index * 2));
            case FP32 -> buf.getFloat(index * 4);
            case FP64 -> buf.getDouble(index * 8);
            case FP8_E4M3 -> Fp8Floats.e4m3ToFloat(buf.get(index));
            case FP8_E5M2 -> Fp8Floats.e5m2ToFloat(buf.get(index));
            default -> throw new IllegalArgumentException(type.toString());
        };
    }

    /** Reads an integer element, sign-extended (zero-extended for UINT8). */
    static long getInteger(final DataType type, final ByteBuffer buf, final int index)
    {
        return switch (type)
        {
            case INT8 -> buf.get(index);
            case UINT8 -> buf.get(index) & 0xFF;
            case INT16 -> buf.getShort(index * 2);
            case INT32 -> buf.getInt(index * 4);
            case INT64 -> buf.getLong(index * 8);
            default -> throw new IllegalArgumentException(type.toString());
        };
    }

    /** Writes an integer element, keeping its low bits (wrapping as in C). */
    static void putInteger(final DataType type, final ByteBuffer buf, final int index, final long value)
    {
        switch (type)
        {
            case INT8, UINT8 -> buf.put(index, (byte)value);
            case INT16 -> buf.putShort(index * 2, (short)value);
            case INT32 -> buf.putInt(index * 4, (int)value);
            case INT64 -> buf.putLong(index * 8, value);
            default -> throw new IllegalArgumentException(type.toString());
        }
    }

    /**
     * The reference reduction of {@code count} elements starting at element {@code first} of every input, in rank
     * order.
     */
    static byte[] reduce(
        final DataType type, final ReduceOp op, final byte[][] inputs, final int first, final int count)
    {
        final byte[] out = new byte[count * type.size()];
        final ByteBuffer dst = wrap(out);
        final ByteBuffer[] src = new ByteBuffer[inputs.length];
        for (int r = 0; r < inputs.length; r++)
        {
            src[r] = wrap(inputs[r]);
        }
        for (int i = 0; i < count; i++)
        {
            if (type.isFloatingPoint())
            {
                double acc = getFloating(type, src[0], first + i);
                for (int r = 1; r < inputs.length; r++)
                {
                    acc = apply(op, acc, getFloating(type, src[r], first + i));
                }
                putFloating(type, dst, i, acc);
            }
            else
            {
                long acc = getInteger(type, src[0], first + i);
                for (int r = 1; r < inputs.length; r++)
                {
                    acc = apply(op, acc, getInteger(type, src[r], first + i));
                }
                putInteger(type, dst, i, acc);
            }
        }
        return out;
    }

    private static double apply(final ReduceOp op, final double a, final double b)
    {
        return switch (op)
        {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            default -> throw new IllegalArgumentException(op.toString());
        };
    }

    private static long apply(final ReduceOp op, final long a, final long b)
    {
        return switch (op)
        {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            default -> throw new IllegalArgumentException(op.toString());
        };
    }

    /** The first element at which two byte arrays of elements differ, or -1; lengths must match. */
    static int firstDifference(final DataType type, final byte[] expected, final byte[] actual)
    {
        if (expected.length != actual.length)
        {
            return 0;
        }
        for (int b = 0; b < expected.length; b++)
        {
            if (expected[b] != actual[b])
            {
                return b / type.size();
            }
        }
        return -1;
    }

    /** An element for a failure message. */
    static String describe(final DataType type, final byte[] bytes, final int index)
    {
        if ((index + 1) * type.size() > bytes.length)
        {
            return "(absent)";
        }
        final ByteBuffer buf = wrap(bytes);
        return type.isFloatingPoint() ? Double.toString(getFloating(type, buf, index)) :
            Long.toString(getInteger(type, buf, index));
    }
}
