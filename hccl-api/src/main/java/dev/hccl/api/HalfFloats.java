package dev.hccl.api;

/**
 * Conversions between {@code float} and the two 16-bit floating-point formats, IEEE 754 binary16 ("FP16", 1 sign,
 * 5 exponent and 10 fraction bits) and bfloat16 ("BF16", the upper half of a binary32), which Java 17 lacks
 * ({@code Float.float16ToFloat} arrived in Java 20).
 * <p>
 * Widening is exact. Narrowing rounds to nearest, ties to even, as IEEE 754 prescribes: values too large for the
 * format become infinities, values too small become subnormals or signed zeros, and a NaN becomes a quiet NaN of the
 * same sign that keeps the top bits of the payload. The 16-bit values travel as the raw bits in a {@code short}.
 */
public final class HalfFloats
{
    /** Bits of a binary32 infinity; the kernels that convert whole vectors share these constants. */
    public static final int FLOAT_INFINITY = 0x7F80_0000;
    /** Bits of the smallest binary32 that rounds to binary16 infinity: 65520, halfway between 65504 and 2^16. */
    public static final int FP16_OVERFLOW_THRESHOLD = 0x477F_F000;
    /** Bits of 2^-14, the smallest normal binary16. */
    public static final int FP16_MIN_NORMAL = 0x3880_0000;
    /** Difference of the exponent biases, 127 - 15, moved to the binary32 exponent field. */
    public static final int EXPONENT_REBIAS = 112 << 23;
    /** Bits of 0.5f, whose ulp is 2^-24, binary16's smallest subnormal. */
    public static final int HALF_BITS = 0x3F00_0000;

    /**
     * Every binary16 value widened, indexed by its bits (256 KiB). Reduction loops are bound by this conversion, and a
     * lookup that stays in L2 is about twice as fast as the branching arithmetic in {@link #decodeFp16(short)}.
     */
    private static final float[] FP16_TO_FLOAT = new float[1 << 16];

    static
    {
        for (int bits = 0; bits < FP16_TO_FLOAT.length; bits++)
        {
            FP16_TO_FLOAT[bits] = decodeFp16((short)bits);
        }
    }

    private HalfFloats()
    {
    }

    /**
     * Widens an IEEE 754 binary16 value to {@code float}; exact for every value. A NaN keeps its sign and payload.
     *
     * @param half the binary16 bits.
     * @return the same value as a {@code float}.
     */
    public static float fp16ToFloat(final short half)
    {
        return FP16_TO_FLOAT[half & 0xFFFF];
    }

    /**
     * The arithmetic behind {@link #fp16ToFloat(short)}'s table.
     *
     * @param half the binary16 bits.
     * @return the same value as a {@code float}.
     */
    private static float decodeFp16(final short half)
    {
        final int bits = half & 0xFFFF;
        final int sign = (bits & 0x8000) << 16;
        final int exponent = bits & 0x7C00;
        final int fraction = bits & 0x03FF;

        if (exponent == 0x7C00)
        {
            // Infinity or NaN: the binary16 quiet bit (fraction bit 9) lands on the binary32 quiet bit (bit 22).
            return Float.intBitsToFloat(sign | FLOAT_INFINITY | (fraction << 13));
        }
        if (exponent != 0)
        {
            return Float.intBitsToFloat(sign | (((bits & 0x7FFF) << 13) + EXPONENT_REBIAS));
        }
        // Zero or subnormal: fraction * 2^-24, exact in float since the fraction has at most 10 bits.
        return Float.intBitsToFloat(sign | Float.floatToRawIntBits(fraction * 0x1p-24f));
    }

    /**
     * Narrows a {@code float} to IEEE 754 binary16, rounding to nearest even.
     * <p>
     * Magnitudes of 65520 and above become infinity; those below 2^-14 become subnormals, and those of 2^-25 and below
     * become zero of the same sign. A NaN becomes a quiet NaN of the same sign.
     *
     * @param value the value.
     * @return the binary16 bits.
     */
    public static short floatToFp16(final float value)
    {
        final int bits = Float.floatToRawIntBits(value);
        final int sign = (bits >>> 16) & 0x8000;
        final int magnitude = bits & 0x7FFF_FFFF;

        if (magnitude >= FP16_OVERFLOW_THRESHOLD)
        {
            if (magnitude > FLOAT_INFINITY)
            {
                // NaN: force the quiet bit so that a signalling payload truncated to 10 bits cannot read as infinity.
                return (short)(sign | 0x7E00 | ((magnitude >>> 13) & 0x03FF));
            }
            return (short)(sign | 0x7C00);
        }
        if (magnitude >= FP16_MIN_NORMAL)
        {
            // Round the 13 dropped bits to nearest even: add just under half, plus one more when the kept lsb is odd.
            // A carry out of the fraction correctly bumps the exponent; the threshold above keeps it below infinity.
            final int rounded = magnitude + 0x0FFF + ((magnitude >>> 13) & 1);
            return (short)(sign | ((rounded - EXPONENT_REBIAS) >>> 13));
        }
        // Subnormal or zero: adding 0.5f makes the float adder round the value to a multiple of 2^-24 (0.5f's ulp),
        // to nearest even; the sum's fraction bits are then the binary16 subnormal (or 0x400, the smallest normal).
        final float aligned = Float.intBitsToFloat(magnitude) + 0.5f;
        return (short)(sign | (Float.floatToRawIntBits(aligned) - HALF_BITS));
    }

    /**
     * Widens a bfloat16 value to {@code float}; exact for every value, since bfloat16 is the upper half of a binary32.
     * A NaN keeps its sign and payload.
     *
     * @param bf16 the bfloat16 bits.
     * @return the same value as a {@code float}.
     */
    public static float bf16ToFloat(final short bf16)
    {
        return Float.intBitsToFloat(bf16 << 16);
    }

    /**
     * Narrows a {@code float} to bfloat16, rounding to nearest even.
     * <p>
     * Magnitudes that round above the largest bfloat16 become infinity; subnormals round like any other value, as
     * bfloat16 has binary32's exponent range. A NaN becomes a quiet NaN of the same sign.
     *
     * @param value the value.
     * @return the bfloat16 bits.
     */
    public static short floatToBf16(final float value)
    {
        final int bits = Float.floatToRawIntBits(value);
        if ((bits & 0x7FFF_FFFF) > FLOAT_INFINITY)
        {
            // NaN: rounding could carry a payload into the exponent, and truncating could leave a zero fraction
            // (infinity), so keep the top bits and force the quiet bit instead.
            return (short)((bits >>> 16) | 0x0040);
        }
        // Round the low 16 bits to nearest even; a carry into the exponent is the right result, up to infinity.
        return (short)((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }
}
