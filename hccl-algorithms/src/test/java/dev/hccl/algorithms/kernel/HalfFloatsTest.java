package dev.hccl.algorithms.kernel;

import dev.hccl.api.HalfFloats;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

@Timeout(120)
class HalfFloatsTest
{
    private static final int RANDOM_SAMPLES = 2_000_000;

    @Test
    void fp16ToFloatDecodesEveryPatternExactly()
    {
        for (int bits = 0; bits < 1 << 16; bits++)
        {
            final float actual = HalfFloats.fp16ToFloat((short)bits);
            final double expected = Reference.fp16Value(bits);
            if (Double.isNaN(expected))
            {
                assertTrue(Float.isNaN(actual), hex(bits));
                final int raw = Float.floatToRawIntBits(actual);
                assertEquals(bits >>> 15, raw >>> 31, "NaN sign of " + hex(bits));
                // The payload survives; the quiet bit may be set by the platform's float moves.
                assertEquals(bits & 0x1FF, (raw >>> 13) & 0x1FF, "NaN payload of " + hex(bits));
                assertEquals(0, raw & 0x1FFF, "NaN low bits of " + hex(bits));
            }
            else
            {
                // Comparing bits, not values, so that -0.0 must decode to -0.0.
                assertEquals(
                    Float.floatToRawIntBits((float)expected), Float.floatToRawIntBits(actual), hex(bits));
                assertEquals(expected, actual, 0.0, hex(bits)); // the float is exactly the double reference
            }
        }
    }

    @Test
    void fp16RoundTripsEveryPattern()
    {
        for (int bits = 0; bits < 1 << 16; bits++)
        {
            final int back = HalfFloats.floatToFp16(HalfFloats.fp16ToFloat((short)bits)) & 0xFFFF;
            if (Reference.isFp16NaN(bits))
            {
                assertTrue(Reference.isFp16NaN(back), hex(bits));
                assertEquals(0x200, back & 0x200, "quiet " + hex(bits));
                assertEquals(bits & 0x8000, back & 0x8000, "sign " + hex(bits));
                assertEquals(bits & 0x1FF, back & 0x1FF, "payload " + hex(bits));
            }
            else
            {
                assertEquals(bits, back, hex(bits));
            }
        }
    }

    @Test
    void floatToFp16RoundsEveryMidpointAndItsNeighboursLikeTheReference()
    {
        for (int lo = 0; lo < 0x7C00; lo++)
        {
            final double loValue = Reference.fp16Value(lo);
            final double hiValue = lo == 0x7BFF ? 65536.0 : Reference.fp16Value(lo + 1);
            // A midpoint of two binary16 neighbours has at most 12 significant bits: exact in float.
            final float midpoint = (float)((loValue + hiValue) / 2);
            assertEquals((loValue + hiValue) / 2, midpoint, 0.0);
            float below = midpoint;
            float above = midpoint;
            checkFp16((float)loValue);
            checkFp16(midpoint);
            for (int step = 0; step < 3; step++)
            {
                below = Math.nextDown(below);
                above = Math.nextUp(above);
                checkFp16(below);
                checkFp16(above);
            }
        }
    }

    @Test
    void floatToFp16RoundsRandomFloatsLikeTheReference()
    {
        final Random random = new Random(42);
        for (int i = 0; i < RANDOM_SAMPLES; i++)
        {
            // Half raw bit patterns (every exponent, NaNs included), half magnitudes spread over binary16's range.
            final float value = (i & 1) == 0 ? Float.intBitsToFloat(random.nextInt()) :
                (random.nextBoolean() ? -1 : 1) * Math.scalb(1.0f + random.nextFloat(), random.nextInt(46) - 28);
            checkFp16(value);
        }
    }

    @Test
    void floatToFp16BoundaryCases()
    {
        assertFp16(0x7BFF, 65504.0f);
        assertFp16(0x7BFF, Math.nextDown(65520.0f));
        assertFp16(0x7C00, 65520.0f); // halfway to 2^16: ties to even, which is infinity
        assertFp16(0x7C00, 65536.0f);
        assertFp16(0xFC00, -1e10f);
        assertFp16(0x7C00, Float.POSITIVE_INFINITY);
        assertFp16(0xFC00, Float.NEGATIVE_INFINITY);
        assertFp16(0x3C00, 1.0f + 0x1p-11f); // halfway between 1 and 1 + 2^-10: even is 1
        assertFp16(0x3C02, 1.0f + 3 * 0x1p-11f); // halfway between odd 0x3C01 and even 0x3C02
        assertFp16(0x3C01, Math.nextUp(1.0f + 0x1p-11f));
        assertFp16(0x0001, 0x1p-24f); // smallest subnormal
        assertFp16(0x0000, 0x1p-25f); // half of it: ties to even zero
        assertFp16(0x0001, Math.nextUp(0x1p-25f));
        assertFp16(0x0002, 3 * 0x1p-25f); // 1.5 ulps: ties to even 2
        assertFp16(0x8000, -0x1p-26f); // underflow keeps the sign
        assertFp16(0x0000, Float.MIN_VALUE);
        assertFp16(0x8000, -0.0f);
        assertFp16(0x03FF, 1023 * 0x1p-24f); // largest subnormal
        assertFp16(0x0400, 1023.5f * 0x1p-24f); // ties up into the smallest normal (0x3FF is odd)
        assertFp16(0x0400, 0x1p-14f);
        assertFp16(0x3555, 1.0f / 3); // 0.333251953125
        // NaNs stay NaN, quiet, with their sign, even when only the discarded payload bits are set.
        assertFp16(0x7E00, Float.intBitsToFloat(0x7F80_0001));
        assertFp16(0xFE00, Float.intBitsToFloat(0xFF80_0001));
        assertFp16(0x7E00, Float.NaN);
        assertFp16(0x7FFF, Float.intBitsToFloat(0x7FFF_FFFF));
    }

    @Test
    void bf16ToFloatIsTheUpperHalf()
    {
        for (int bits = 0; bits < 1 << 16; bits++)
        {
            final float actual = HalfFloats.bf16ToFloat((short)bits);
            if (Reference.isBf16NaN(bits))
            {
                assertTrue(Float.isNaN(actual), hex(bits));
            }
            else
            {
                assertEquals(bits << 16, Float.floatToRawIntBits(actual), hex(bits));
            }
        }
        assertEquals(1.0f, HalfFloats.bf16ToFloat((short)0x3F80));
        assertEquals(-2.0f, HalfFloats.bf16ToFloat((short)0xC000));
    }

    @Test
    void bf16RoundTripsEveryPattern()
    {
        for (int bits = 0; bits < 1 << 16; bits++)
        {
            final int back = HalfFloats.floatToBf16(HalfFloats.bf16ToFloat((short)bits)) & 0xFFFF;
            if (Reference.isBf16NaN(bits))
            {
                assertTrue(Reference.isBf16NaN(back), hex(bits));
                assertEquals(0x40, back & 0x40, "quiet " + hex(bits));
                assertEquals(bits & 0x8000, back & 0x8000, "sign " + hex(bits));
            }
            else
            {
                assertEquals(bits, back, hex(bits));
            }
        }
    }

    @Test
    void floatToBf16RoundsEveryMidpointAndItsNeighboursLikeTheReference()
    {
        for (int upper = 0; upper < 1 << 16; upper++)
        {
            final int midpoint = (upper << 16) | 0x8000;
            for (int delta = -2; delta <= 2; delta++)
            {
                checkBf16(Float.intBitsToFloat(midpoint + delta));
            }
            checkBf16(Float.intBitsToFloat(upper << 16));
        }
    }

    @Test
    void floatToBf16RoundsRandomFloatsLikeTheReference()
    {
        final Random random = new Random(7);
        for (int i = 0; i < RANDOM_SAMPLES; i++)
        {
            checkBf16(Float.intBitsToFloat(random.nextInt()));
        }
    }

    @Test
    void floatToBf16BoundaryCases()
    {
        assertBf16(0x3F80, Float.intBitsToFloat(0x3F80_8000)); // tie between even 0x3F80 and odd 0x3F81
        assertBf16(0x3F82, Float.intBitsToFloat(0x3F81_8000)); // tie between odd 0x3F81 and even 0x3F82
        assertBf16(0x3F81, Float.intBitsToFloat(0x3F80_8001));
        assertBf16(0x7F7F, Float.intBitsToFloat(0x7F7F_7FFF));
        assertBf16(0x7F80, Float.MAX_VALUE); // 0x7F7FFFFF rounds past the largest bfloat16
        assertBf16(0x7F80, Float.intBitsToFloat(0x7F7F_8000)); // tie, and 0x7F7F is odd
        assertBf16(0xFF80, -Float.MAX_VALUE);
        assertBf16(0x7F80, Float.POSITIVE_INFINITY);
        assertBf16(0x0000, Float.MIN_VALUE);
        assertBf16(0x0000, Float.intBitsToFloat(0x0000_8000)); // subnormal tie to even zero
        assertBf16(0x0002, Float.intBitsToFloat(0x0001_8000)); // subnormal tie to even 2
        assertBf16(0x0080, Float.intBitsToFloat(0x007F_FFFF)); // largest float subnormal rounds to MIN_NORMAL
        assertBf16(0x8000, -Float.MIN_VALUE);
        assertBf16(0x7FC0, Float.intBitsToFloat(0x7F80_0001)); // a NaN whose payload is only in the low half
        assertBf16(0xFFC0, Float.intBitsToFloat(0xFF80_0001));
        assertBf16(0x7FFF, Float.intBitsToFloat(0x7FFF_FFFF)); // no carry out of a NaN payload
    }

    private static void checkFp16(final float value)
    {
        final int expected = Reference.toFp16(value);
        final int actual = HalfFloats.floatToFp16(value) & 0xFFFF;
        if (Reference.isFp16NaN(expected))
        {
            if (!Reference.isFp16NaN(actual) || (actual & 0x200) == 0 || (actual & 0x8000) != (expected & 0x8000))
            {
                fail(value + " (" + hex(Float.floatToRawIntBits(value)) + "): expected a quiet NaN, got " + hex(actual));
            }
        }
        else if (expected != actual)
        {
            fail(value + " (" + hex(Float.floatToRawIntBits(value)) + "): expected " + hex(expected) + ", got " +
                hex(actual));
        }
    }

    private static void checkBf16(final float value)
    {
        final int expected = Reference.toBf16(value);
        final int actual = HalfFloats.floatToBf16(value) & 0xFFFF;
        if (Reference.isBf16NaN(expected))
        {
            if (!Reference.isBf16NaN(actual) || (actual & 0x40) == 0 || (actual & 0x8000) != (expected & 0x8000))
            {
                fail(hex(Float.floatToRawIntBits(value)) + ": expected a quiet NaN, got " + hex(actual));
            }
        }
        else if (expected != actual)
        {
            fail(value + " (" + hex(Float.floatToRawIntBits(value)) + "): expected " + hex(expected) + ", got " +
                hex(actual));
        }
    }

    private static void assertFp16(final int expected, final float value)
    {
        assertEquals(hex(expected), hex(HalfFloats.floatToFp16(value) & 0xFFFF), value + " to fp16");
        // The reference must agree with the hand-computed literals too, or the comparisons above prove little.
        if (!Reference.isFp16NaN(expected))
        {
            assertEquals(hex(expected), hex(Reference.toFp16(value)), value + " reference to fp16");
        }
    }

    private static void assertBf16(final int expected, final float value)
    {
        assertEquals(hex(expected), hex(HalfFloats.floatToBf16(value) & 0xFFFF), value + " to bf16");
        if (!Reference.isBf16NaN(expected))
        {
            assertEquals(hex(expected), hex(Reference.toBf16(value)), value + " reference to bf16");
        }
    }

    private static String hex(final int bits)
    {
        return "0x" + Integer.toHexString(bits);
    }
}
