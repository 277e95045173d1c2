package dev.hccl.bench.check;

import dev.hccl.api.DataType;
import dev.hccl.api.Fp8Floats;
import dev.hccl.api.HalfFloats;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;

/**
 * The inputs every rank generates and the results a correct library computes from them, written independently of the
 * library's kernels. Elements are handled as raw bits in a {@code long}.
 * <p>
 * Inputs are chosen so that the expected result does not depend on the order of reduction: integers are arbitrary
 * (their arithmetic wraps, which is associative and commutative), floating-point values are small integers, halves
 * and signs whose sums and products are exact. So one reference holds for every algorithm, and a rank whose bits
 * differ from it is wrong.
 */
public final class Reference
{
    private static final double[] PRODUCT_FACTORS = {1.0, -1.0, 2.0, 0.5, -2.0, -0.5, 1.0, 1.0};
    /**
     * FP8 holds every integer only up to 8 (E5M2): its sums take -1, 0 and 1 from the first 8 ranks and 0 from the
     * others, so every partial sum is an integer within [-8, 8]; its products take factors of magnitude 1 from the
     * ninth rank on, so every partial product is 2^k with |k| <= 8, within E4M3's range.
     */
    private static final int FP8_EXACT_RANKS = 8;

    private Reference()
    {
    }

    /**
     * The input element {@code index} of {@code rank}.
     *
     * @param seed  the case's seed.
     * @param rank  the rank.
     * @param index the element.
     * @param type  its type.
     * @param op    the reduction it feeds (PROD takes factors whose products stay exact), or null.
     * @return its bits.
     */
    public static long input(final long seed, final int rank, final long index, final DataType type, final ReduceOp op)
    {
        final long h = mix(seed * 0x9E3779B97F4A7C15L + rank * 0xC2B2AE3D27D4EB4FL + index);
        if (!type.isFloatingPoint())
        {
            return narrow(type, h);
        }
        if (isFp8(type) && (op == null || op == ReduceOp.AVG))
        {
            // Moved, or divided before the sum: any value but NaN, so that a misplaced block shows; for AVG, whose
            // quotients round, on rank 0 alone, so that their sum is the same in every order.
            final long bits = (h >>> 8) & 0xFF;
            return op == ReduceOp.AVG && rank != 0 || Double.isNaN(toDouble(type, bits)) ? 0 : bits;
        }
        if (isFp8(type))
        {
            final boolean late = rank >= FP8_EXACT_RANKS;
            final double value = op == ReduceOp.PROD ? PRODUCT_FACTORS[(int)(h & 7)] : ((h >>> 8) % 3) - 1.0;
            return fromDouble(type, late ? (op == ReduceOp.PROD ? Math.signum(value) : 0.0) : value);
        }
        final double value = op == ReduceOp.PROD ? PRODUCT_FACTORS[(int)(h & 7)] : ((h >>> 8) % 33) / 2.0 - 8.0;
        return fromDouble(type, value);
    }

    /**
     * Element {@code index} of the reduction of every rank's input, as a correct library computes it: in rank order,
     * AVG dividing the sum by the world size, or for FP8 each input before the sum (an FP8 sum would saturate).
     *
     * @param seed  the case's seed.
     * @param ranks the world size.
     * @param index the element.
     * @param type  its type.
     * @param op    the reduction.
     * @return its bits.
     */
    public static long reduced(final long seed, final int ranks, final long index, final DataType type,
        final ReduceOp op)
    {
        final boolean dividesInputs = op == ReduceOp.AVG && isFp8(type);
        long acc = 0;
        for (int r = 0; r < ranks; r++)
        {
            final long x = input(seed, r, index, type, op);
            final long term = dividesInputs ? divide(type, x, ranks) : x;
            acc = r == 0 ? term : combine(type, op, acc, term);
        }
        return op == ReduceOp.AVG && !dividesInputs ? divide(type, acc, ranks) : acc;
    }

    /**
     * Combines two elements as the reduction does.
     *
     * @param type the type.
     * @param op   the reduction (AVG combines as SUM).
     * @param a    left operand bits.
     * @param b    right operand bits.
     * @return the result bits.
     */
    public static long combine(final DataType type, final ReduceOp op, final long a, final long b)
    {
        if (!type.isFloatingPoint())
        {
            final boolean unsigned = type == DataType.UINT8;
            final long x = unsigned ? a & 0xFF : a;
            final long y = unsigned ? b & 0xFF : b;
            switch (op)
            {
                case SUM:
                case AVG:
                    return narrow(type, x + y);
                case PROD:
                    return narrow(type, x * y);
                case MAX:
                    return narrow(type, Math.max(x, y));
                case MIN:
                    return narrow(type, Math.min(x, y));
                default:
                    throw new IllegalArgumentException(op.name());
            }
        }
        final double x = toDouble(type, a);
        final double y = toDouble(type, b);
        switch (op)
        {
            case SUM:
            case AVG:
                return fromDouble(type, x + y);
            case PROD:
                return fromDouble(type, x * y);
            case MAX:
                return fromDouble(type, Math.max(x, y));
            case MIN:
                return fromDouble(type, Math.min(x, y));
            default:
                throw new IllegalArgumentException(op.name());
        }
    }

    /**
     * The last step of AVG: divides as the library specifies (in the type's precision; 16- and 8-bit floats through
     * float).
     *
     * @param type    a floating-point type.
     * @param sum     the sum's bits.
     * @param divisor the world size.
     * @return the mean's bits.
     */
    public static long divide(final DataType type, final long sum, final int divisor)
    {
        if (divisor == 1)
        {
            // A single rank's average is its input, bit for bit (an E5M2 infinity is not saturated).
            return sum;
        }
        switch (type)
        {
            case FP64:
                return Double.doubleToRawLongBits(Double.longBitsToDouble(sum) / divisor);
            case FP32:
                return Float.floatToRawIntBits(Float.intBitsToFloat((int)sum) / divisor) & 0xFFFF_FFFFL;
            case FP16:
                return HalfFloats.floatToFp16(HalfFloats.fp16ToFloat((short)sum) / divisor) & 0xFFFFL;
            case BF16:
                return HalfFloats.floatToBf16(HalfFloats.bf16ToFloat((short)sum) / divisor) & 0xFFFFL;
            case FP8_E4M3:
            case FP8_E5M2:
                return fromFloat(type, (float)toDouble(type, sum) / divisor);
            default:
                throw new IllegalArgumentException(type.name());
        }
    }

    /**
     * Writes an element.
     *
     * @param buf   the buffer (native order).
     * @param index element index.
     * @param type  the type.
     * @param bits  the element's bits.
     */
    public static void put(final ByteBuffer buf, final int index, final DataType type, final long bits)
    {
        final int at = index * type.size();
        switch (type.size())
        {
            case 1:
                buf.put(at, (byte)bits);
                break;
            case 2:
                buf.putShort(at, (short)bits);
                break;
            case 4:
                buf.putInt(at, (int)bits);
                break;
            default:
                buf.putLong(at, bits);
        }
    }

    /**
     * Reads an element.
     *
     * @param buf   the buffer (native order).
     * @param index element index.
     * @param type  the type.
     * @return its bits, in the form {@link #input} and {@link #combine} use.
     */
    public static long get(final ByteBuffer buf, final int index, final DataType type)
    {
        final int at = index * type.size();
        switch (type)
        {
            case INT8:
                return buf.get(at);
            case UINT8:
                return buf.get(at) & 0xFF;
            case FP8_E4M3:
            case FP8_E5M2:
                return buf.get(at) & 0xFFL;
            case INT16:
                return buf.getShort(at);
            case FP16:
            case BF16:
                return buf.getShort(at) & 0xFFFFL;
            case INT32:
                return buf.getInt(at);
            case FP32:
                return buf.getInt(at) & 0xFFFF_FFFFL;
            default:
                return buf.getLong(at);
        }
    }

    /**
     * Describes an element's value for messages.
     *
     * @param type the type.
     * @param bits its bits.
     * @return the value in words.
     */
    public static String show(final DataType type, final long bits)
    {
        return type.isFloatingPoint() ? Double.toString(toDouble(type, bits)) : Long.toString(bits);
    }

    private static long narrow(final DataType type, final long value)
    {
        switch (type)
        {
            case INT8:
                return (byte)value;
            case UINT8:
                return value & 0xFF;
            case INT16:
                return (short)value;
            case INT32:
                return (int)value;
            default:
                return value;
        }
    }

    private static double toDouble(final DataType type, final long bits)
    {
        switch (type)
        {
            case FP16:
                return HalfFloats.fp16ToFloat((short)bits);
            case BF16:
                return HalfFloats.bf16ToFloat((short)bits);
            case FP32:
                return Float.intBitsToFloat((int)bits);
            case FP8_E4M3:
                return Fp8Floats.e4m3ToFloat((byte)bits);
            case FP8_E5M2:
                return Fp8Floats.e5m2ToFloat((byte)bits);
            default:
                return Double.longBitsToDouble(bits);
        }
    }

    private static long fromDouble(final DataType type, final double value)
    {
        // Every value the inputs can produce is exact in the type, so narrowing through float loses nothing.
        return type == DataType.FP64 ? Double.doubleToRawLongBits(value) : fromFloat(type, (float)value);
    }

    private static boolean isFp8(final DataType type)
    {
        return type == DataType.FP8_E4M3 || type == DataType.FP8_E5M2;
    }

    private static long fromFloat(final DataType type, final float value)
    {
        switch (type)
        {
            case FP16:
                return HalfFloats.floatToFp16(value) & 0xFFFFL;
            case BF16:
                return HalfFloats.floatToBf16(value) & 0xFFFFL;
            case FP32:
                return Float.floatToRawIntBits(value) & 0xFFFF_FFFFL;
            case FP8_E4M3:
                return Fp8Floats.floatToE4m3(value) & 0xFFL;
            case FP8_E5M2:
                return Fp8Floats.floatToE5m2(value) & 0xFFL;
            default:
                throw new IllegalArgumentException(type.name());
        }
    }

    private static long mix(final long x)
    {
        long z = x;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
