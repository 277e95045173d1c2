package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Straightforward reference arithmetic, written independently of the kernels: no bit tricks, values as doubles.
 */
final class Reference
{
    /** Values of the finite non-negative binary16 patterns 0x0000..0x7BFF, then 2^16 standing in for infinity. */
    private static final double[] FP16_MAGNITUDES = new double[0x7C01];

    static
    {
        for (int bits = 0; bits < 0x7C00; bits++)
        {
            FP16_MAGNITUDES[bits] = fp16Value(bits);
        }
        // With an unbounded exponent the next value after 65504 would be 65536: rounding to it means overflow.
        FP16_MAGNITUDES[0x7C00] = 65536.0;
    }

    private Reference()
    {
    }

    /**
     * The value of a binary16 pattern by the textbook formula: (-1)^s * 2^(e-15) * 1.f, or 2^-14 * 0.f when e = 0.
     */
    static double fp16Value(final int bits)
    {
        final int sign = (bits >> 15) & 1;
        final int exponent = (bits >> 10) & 0x1F;
        final int fraction = bits & 0x3FF;
        final double magnitude;
        if (exponent == 0x1F)
        {
            magnitude = fraction == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
        }
        else if (exponent == 0)
        {
            magnitude = Math.scalb(fraction / 1024.0, -14);
        }
        else
        {
            magnitude = Math.scalb(1.0 + fraction / 1024.0, exponent - 15);
        }
        return sign == 1 ? -magnitude : magnitude;
    }

    static boolean isFp16NaN(final int bits)
    {
        return (bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0;
    }

    static boolean isBf16NaN(final int bits)
    {
        return (bits & 0x7F80) == 0x7F80 && (bits & 0x7F) != 0;
    }

    /**
     * Rounds a float to binary16 by searching the sorted table of binary16 values for its two neighbours and comparing
     * against their midpoint; ties go to the even pattern. All quantities are exact in double: float and binary16
     * values have at most 24 significant bits, and a midpoint of two neighbours needs one bit more.
     * NaN maps to 0x7E00 with the input's sign (callers compare NaNs by class, not payload).
     */
    static int toFp16(final float value)
    {
        final int sign = Float.floatToRawIntBits(value) < 0 ? 0x8000 : 0;
        if (Float.isNaN(value))
        {
            return sign | 0x7E00;
        }
        final double magnitude = Math.abs((double)value);
        if (magnitude >= 65536.0)
        {
            return sign | 0x7C00;
        }
        int lo = Arrays.binarySearch(FP16_MAGNITUDES, magnitude);
        if (lo >= 0)
        {
            return sign | lo;
        }
        lo = -lo - 2; // the insertion point minus one: the largest pattern below the value
        final int hi = lo + 1;
        final double midpoint = (FP16_MAGNITUDES[lo] + FP16_MAGNITUDES[hi]) / 2;
        final int rounded;
        if (magnitude < midpoint)
        {
            rounded = lo;
        }
        else if (magnitude > midpoint)
        {
            rounded = hi;
        }
        else
        {
            rounded = (lo & 1) == 0 ? lo : hi;
        }
        return sign | rounded;
    }

    /**
     * Rounds a float to bfloat16: the two candidates are the float with its low 16 bits cleared and the next bfloat16
     * up; the value is compared with their midpoint (exact in double). Ties go to the even pattern. NaN maps to 0x7FC0
     * with the input's sign.
     */
    static int toBf16(final float value)
    {
        final int bits = Float.floatToRawIntBits(value);
        final int sign = bits < 0 ? 0x8000 : 0;
        if (Float.isNaN(value))
        {
            return sign | 0x7FC0;
        }
        if (Float.isInfinite(value))
        {
            return sign | 0x7F80;
        }
        final int magnitudeBits = bits & 0x7FFF_FFFF;
        final int lo = magnitudeBits >>> 16;
        final int hi = lo + 1;
        final double loValue = Float.intBitsToFloat(lo << 16);
        final double hiValue = hi == 0x7F80 ? 0x1p128 : Float.intBitsToFloat(hi << 16);
        final double magnitude = Float.intBitsToFloat(magnitudeBits);
        final double midpoint = (loValue + hiValue) / 2;
        final int rounded;
        if (magnitude < midpoint)
        {
            rounded = lo;
        }
        else if (magnitude > midpoint)
        {
            rounded = hi;
        }
        else
        {
            rounded = (lo & 1) == 0 ? lo : hi;
        }
        return sign | rounded;
    }

    /**
     * The value of an OCP FP8 pattern by the textbook formula: (-1)^s * 2^(e-bias) * 1.f, or 2^(1-bias) * 0.f when
     * e = 0; E5M2's top exponent is infinity or NaN, E4M3's S.1111.111 alone is NaN.
     */
    static double fp8Value(final DataType type, final int bits)
    {
        final boolean e4m3 = type == DataType.FP8_E4M3;
        final int fractionBits = e4m3 ? 3 : 2;
        final int bias = e4m3 ? 7 : 15;
        final int exponent = (bits & 0x7F) >> fractionBits;
        final int fraction = bits & ((1 << fractionBits) - 1);
        final int topExponent = (1 << (7 - fractionBits)) - 1;
        final double magnitude;
        if (e4m3 && (bits & 0x7F) == 0x7F)
        {
            magnitude = Double.NaN;
        }
        else if (!e4m3 && exponent == topExponent)
        {
            magnitude = fraction == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
        }
        else if (exponent == 0)
        {
            magnitude = Math.scalb((double)fraction / (1 << fractionBits), 1 - bias);
        }
        else
        {
            magnitude = Math.scalb(1.0 + (double)fraction / (1 << fractionBits), exponent - bias);
        }
        return (bits & 0x80) != 0 ? -magnitude : magnitude;
    }

    /**
     * Rounds a float to OCP FP8 by searching every finite pattern of the value's sign for the nearest; ties go to the
     * even pattern. A value beyond the largest finite, an infinity too, therefore saturates to it (CUDA's
     * __NV_SATFINITE). NaN maps to the kernels' canonical NaN (0x7F, 0x7E).
     */
    static int toFp8(final DataType type, final float value)
    {
        final boolean e4m3 = type == DataType.FP8_E4M3;
        if (Float.isNaN(value))
        {
            return e4m3 ? 0x7F : 0x7E;
        }
        final int sign = Float.floatToRawIntBits(value) < 0 ? 0x80 : 0;
        // An infinity is beyond every finite value: it rounds as twice the largest finite does, to the largest finite.
        final double target = Float.isInfinite(value) ? Math.copySign(2 * (e4m3 ? 448.0 : 57344.0), value) : value;
        int best = -1;
        double bestDistance = Double.POSITIVE_INFINITY;
        for (int magnitude = 0; magnitude < 0x80; magnitude++)
        {
            final double candidate = fp8Value(type, sign | magnitude);
            if (Double.isNaN(candidate) || Double.isInfinite(candidate))
            {
                continue;
            }
            final double distance = Math.abs(candidate - target);
            if (distance < bestDistance || distance == bestDistance && (magnitude & 1) == 0)
            {
                best = magnitude;
                bestDistance = distance;
            }
        }
        return sign | best;
    }

    /** IEEE maximum as the kernels define it: NaN if either is NaN, +0 above -0. */
    static float max(final float a, final float b)
    {
        if (Float.isNaN(a) || Float.isNaN(b))
        {
            return Float.NaN;
        }
        if (a == 0.0f && b == 0.0f)
        {
            return (Float.floatToRawIntBits(a) == 0 || Float.floatToRawIntBits(b) == 0) ? 0.0f : -0.0f;
        }
        return a > b ? a : b;
    }

    /** IEEE minimum as the kernels define it: NaN if either is NaN, -0 below +0. */
    static float min(final float a, final float b)
    {
        if (Float.isNaN(a) || Float.isNaN(b))
        {
            return Float.NaN;
        }
        if (a == 0.0f && b == 0.0f)
        {
            return (Float.floatToRawIntBits(a) != 0 || Float.floatToRawIntBits(b) != 0) ? -0.0f : 0.0f;
        }
        return a < b ? a : b;
    }

    static double max(final double a, final double b)
    {
        if (Double.isNaN(a) || Double.isNaN(b))
        {
            return Double.NaN;
        }
        if (a == 0.0 && b == 0.0)
        {
            return (Double.doubleToRawLongBits(a) == 0 || Double.doubleToRawLongBits(b) == 0) ? 0.0 : -0.0;
        }
        return a > b ? a : b;
    }

    static double min(final double a, final double b)
    {
        if (Double.isNaN(a) || Double.isNaN(b))
        {
            return Double.NaN;
        }
        if (a == 0.0 && b == 0.0)
        {
            return (Double.doubleToRawLongBits(a) != 0 || Double.doubleToRawLongBits(b) != 0) ? -0.0 : 0.0;
        }
        return a < b ? a : b;
    }

    /** A little-endian view of a copy of the bytes, for reading elements the obvious way. */
    static ByteBuffer littleEndian(final byte[] bytes)
    {
        return ByteBuffer.wrap(bytes.clone()).order(ByteOrder.LITTLE_ENDIAN);
    }
}
