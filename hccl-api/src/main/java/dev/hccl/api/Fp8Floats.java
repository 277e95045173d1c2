package dev.hccl.api;

/**
 * Conversions between {@code float} and the two 8-bit floating-point formats of the OCP specification (OFP8), as NCCL's
 * {@code ncclFloat8e4m3} and {@code ncclFloat8e5m2} carry them:
 * <ul>
 * <li><b>E4M3</b>: 1 sign, 4 exponent (bias 7) and 3 fraction bits. No infinities; NaN is {@code S.1111.111}, the
 * only pattern of the top binade given up, so the largest finite is 448. Smallest subnormal 2^-9.</li>
 * <li><b>E5M2</b>: 1 sign, 5 exponent (bias 15) and 2 fraction bits, IEEE 754 style: exponent all ones is an
 * infinity (fraction 0) or a NaN. Largest finite 57344, smallest subnormal 2^-16.</li>
 * </ul>
 * Widening is exact (E5M2's infinities widen to infinities). Narrowing rounds to nearest, ties to even, and
 * <em>saturates</em> as NCCL's FP8 reductions do (CUDA's {@code __NV_SATFINITE}): any value beyond the largest finite,
 * an infinity included, becomes the largest finite of its sign, so that a sum that overflows stays a number of the
 * right sign. A NaN stays a NaN. Values too small become subnormals or signed zeros. The 8-bit values travel as the
 * raw bits in a {@code byte}.
 */
public final class Fp8Floats
{
    /** Bits of E4M3's largest finite, 448 ({@code 0.1111.110}). */
    public static final byte E4M3_MAX = 0x7E;
    /** Bits of E4M3's NaN ({@code 0.1111.111}; with the sign bit set, too). */
    public static final byte E4M3_NAN = 0x7F;
    /** Bits of E5M2's largest finite, 57344 ({@code 0.11110.11}). */
    public static final byte E5M2_MAX = 0x7B;
    /** Bits of E5M2's positive infinity ({@code 0.11111.00}), which narrowing never makes (it saturates). */
    public static final byte E5M2_INFINITY = 0x7C;
    /** Bits of the quiet NaN that E5M2 narrowing makes ({@code 0.11111.10}). */
    public static final byte E5M2_NAN = 0x7E;

    /** Every value of each format widened, indexed by its bits. */
    private static final float[] E4M3_TO_FLOAT = new float[256];
    private static final float[] E5M2_TO_FLOAT = new float[256];

    static
    {
        for (int bits = 0; bits < 256; bits++)
        {
            E4M3_TO_FLOAT[bits] = decode(bits, 3, 7, false);
            E5M2_TO_FLOAT[bits] = decode(bits, 2, 15, true);
        }
    }

    private Fp8Floats()
    {
    }

    /**
     * Widens an E4M3 value to {@code float}; exact.
     *
     * @param bits the E4M3 bits.
     * @return the value.
     */
    public static float e4m3ToFloat(final byte bits)
    {
        return E4M3_TO_FLOAT[bits & 0xFF];
    }

    /**
     * Widens an E5M2 value to {@code float}; exact.
     *
     * @param bits the E5M2 bits.
     * @return the value.
     */
    public static float e5m2ToFloat(final byte bits)
    {
        return E5M2_TO_FLOAT[bits & 0xFF];
    }

    /**
     * Narrows to E4M3: rounds to nearest even, saturates beyond ±448 (infinities too), keeps a NaN a NaN.
     *
     * @param value the value.
     * @return the E4M3 bits.
     */
    public static byte floatToE4m3(final float value)
    {
        if (Float.isNaN(value))
        {
            return (byte)(signOf(value) | E4M3_NAN);
        }
        return Float.isInfinite(value) ? (byte)(signOf(value) | E4M3_MAX) : narrow(value, 3, 7, E4M3_MAX);
    }

    /**
     * Narrows to E5M2: rounds to nearest even, saturates beyond ±57344 (infinities too), keeps a NaN a NaN.
     *
     * @param value the value.
     * @return the E5M2 bits.
     */
    public static byte floatToE5m2(final float value)
    {
        if (Float.isNaN(value))
        {
            return (byte)(signOf(value) | E5M2_NAN);
        }
        return Float.isInfinite(value) ? (byte)(signOf(value) | E5M2_MAX) : narrow(value, 2, 15, E5M2_MAX);
    }

    private static int signOf(final float value)
    {
        return (Float.floatToRawIntBits(value) >>> 24) & 0x80;
    }

    /**
     * Rounds a finite value to the format of {@code fraction} fraction bits and exponent bias {@code bias}, whose
     * largest finite has the bits {@code max}.
     */
    private static byte narrow(final float value, final int fraction, final int bias, final byte max)
    {
        final int raw = Float.floatToRawIntBits(value);
        final int sign = (raw >>> 24) & 0x80;
        final int magnitude = raw & 0x7FFF_FFFF;
        final int minNormalExponent = 1 - bias;
        final int exponent = (magnitude >>> 23) - 127;
        final int bits;
        if (exponent < minNormalExponent)
        {
            // Subnormal in the format (or zero): a count of the smallest subnormal, 2^(minNormal - fraction). The
            // scaling by a power of two is exact, and rint rounds ties to even; a count of 2^fraction is the smallest
            // normal, whose bits are that same number.
            bits = (int)Math.rint(Math.abs((double)value) * Math.scalb(1.0, fraction - minNormalExponent));
        }
        else
        {
            // Normal: round the binary32 fraction to the format's, ties to even, carrying into the exponent.
            final int shift = 23 - fraction;
            final int lsb = (magnitude >>> shift) & 1;
            final int rounded = (magnitude + (1 << (shift - 1)) - 1 + lsb) >>> shift;
            // rounded = binary32 exponent field and fraction, in the format's fraction width; rebias the exponent.
            final long rebiased = (long)rounded - ((long)(127 - bias) << fraction);
            bits = rebiased > (max & 0xFF) ? max & 0xFF : (int)rebiased;
        }
        return (byte)(sign | bits);
    }

    /** The value of {@code bits} in a format of {@code fraction} fraction bits and bias {@code bias}. */
    private static float decode(final int bits, final int fraction, final int bias, final boolean ieee)
    {
        final boolean negative = (bits & 0x80) != 0;
        final int exponentBits = 7 - fraction;
        final int exponentField = (bits >>> fraction) & ((1 << exponentBits) - 1);
        final int fractionField = bits & ((1 << fraction) - 1);
        final int maxExponentField = (1 << exponentBits) - 1;
        final float magnitude;
        if (ieee && exponentField == maxExponentField)
        {
            magnitude = fractionField == 0 ? Float.POSITIVE_INFINITY : Float.NaN;
        }
        else if (!ieee && exponentField == maxExponentField && fractionField == (1 << fraction) - 1)
        {
            magnitude = Float.NaN;
        }
        else if (exponentField == 0)
        {
            magnitude = Math.scalb((float)fractionField, 1 - bias - fraction);
        }
        else
        {
            magnitude = Math.scalb((float)((1 << fraction) | fractionField), exponentField - bias - fraction);
        }
        return negative ? -magnitude : magnitude;
    }
}
