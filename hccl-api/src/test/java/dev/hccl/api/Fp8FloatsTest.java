package dev.hccl.api;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Fp8Floats} against the OCP formats' definitions: every pattern's value, and narrowing of many binary32
 * values against a brute-force nearest-value search (ties to the even pattern, saturation at the largest finite).
 */
class Fp8FloatsTest
{
    @Test
    void e4m3ValuesAreTheSpecifications()
    {
        assertEquals(0f, Fp8Floats.e4m3ToFloat((byte)0x00));
        assertEquals(-0f, Fp8Floats.e4m3ToFloat((byte)0x80));
        assertEquals(0x1p-9f, Fp8Floats.e4m3ToFloat((byte)0x01), "smallest subnormal");
        assertEquals(0.875f * 0x1p-6f, Fp8Floats.e4m3ToFloat((byte)0x07), "largest subnormal");
        assertEquals(0x1p-6f, Fp8Floats.e4m3ToFloat((byte)0x08), "smallest normal");
        assertEquals(1f, Fp8Floats.e4m3ToFloat((byte)0x38));
        assertEquals(448f, Fp8Floats.e4m3ToFloat(Fp8Floats.E4M3_MAX));
        assertEquals(-448f, Fp8Floats.e4m3ToFloat((byte)0xFE));
        assertTrue(Float.isNaN(Fp8Floats.e4m3ToFloat((byte)0x7F)));
        assertTrue(Float.isNaN(Fp8Floats.e4m3ToFloat((byte)0xFF)));
        // 0.1111.xxx below the NaN pattern are finite: 256, 288, ..., 448.
        assertEquals(256f, Fp8Floats.e4m3ToFloat((byte)0x78));
        int nans = 0;
        for (int b = 0; b < 256; b++)
        {
            nans += Float.isNaN(Fp8Floats.e4m3ToFloat((byte)b)) ? 1 : 0;
            assertTrue(!Float.isInfinite(Fp8Floats.e4m3ToFloat((byte)b)), "E4M3 has no infinity: " + b);
        }
        assertEquals(2, nans);
    }

    @Test
    void e5m2ValuesAreTheSpecifications()
    {
        assertEquals(0x1p-16f, Fp8Floats.e5m2ToFloat((byte)0x01), "smallest subnormal");
        assertEquals(0x1p-14f, Fp8Floats.e5m2ToFloat((byte)0x04), "smallest normal");
        assertEquals(1f, Fp8Floats.e5m2ToFloat((byte)0x3C));
        assertEquals(57344f, Fp8Floats.e5m2ToFloat(Fp8Floats.E5M2_MAX));
        assertEquals(Float.POSITIVE_INFINITY, Fp8Floats.e5m2ToFloat(Fp8Floats.E5M2_INFINITY));
        assertEquals(Float.NEGATIVE_INFINITY, Fp8Floats.e5m2ToFloat((byte)0xFC));
        int nans = 0;
        for (int b = 0; b < 256; b++)
        {
            nans += Float.isNaN(Fp8Floats.e5m2ToFloat((byte)b)) ? 1 : 0;
        }
        assertEquals(6, nans);
        // E5M2 is the top byte of a binary16: the same value.
        for (int b = 0; b < 256; b++)
        {
            final float half = HalfFloats.fp16ToFloat((short)(b << 8));
            final float eight = Fp8Floats.e5m2ToFloat((byte)b);
            assertTrue(Float.isNaN(half) ? Float.isNaN(eight) : half == eight, "pattern " + b);
        }
    }

    @Test
    void everyFinitePatternNarrowsBackToItself()
    {
        for (int b = 0; b < 256; b++)
        {
            final float e4 = Fp8Floats.e4m3ToFloat((byte)b);
            final float e5 = Fp8Floats.e5m2ToFloat((byte)b);
            if (!Float.isNaN(e4))
            {
                assertEquals((byte)b, Fp8Floats.floatToE4m3(e4), "E4M3 " + b);
            }
            if (Float.isInfinite(e5))
            {
                // Saturating, as NCCL: an infinity narrows to the largest finite of its sign.
                assertEquals((byte)((b & 0x80) | Fp8Floats.E5M2_MAX), Fp8Floats.floatToE5m2(e5), "E5M2 " + b);
            }
            else if (!Float.isNaN(e5))
            {
                assertEquals((byte)b, Fp8Floats.floatToE5m2(e5), "E5M2 " + b);
            }
        }
    }

    @Test
    void narrowingRoundsToNearestEvenAndSaturates()
    {
        final SplittableRandom random = new SplittableRandom(8);
        for (int i = 0; i < 200_000; i++)
        {
            // Values around each format's range, half of them exactly between two neighbours (the ties).
            final float x;
            if (i % 2 == 0)
            {
                x = (float)(random.nextDouble(-1, 1) * Math.scalb(1.0, random.nextInt(-20, 18)));
            }
            else
            {
                final int b = random.nextInt(256);
                final float a = Fp8Floats.e4m3ToFloat((byte)b);
                final float c = Fp8Floats.e5m2ToFloat((byte)b);
                final float next = i % 4 == 1 ? Fp8Floats.e4m3ToFloat((byte)(b + 1)) :
                    Fp8Floats.e5m2ToFloat((byte)(b + 1));
                x = ((i % 4 == 1 ? a : c) + next) / 2;
            }
            if (Float.isNaN(x) || Float.isInfinite(x))
            {
                continue;
            }
            assertEquals(nearest(x, false), Fp8Floats.floatToE4m3(x), "E4M3 of " + x);
            assertEquals(nearest(x, true), Fp8Floats.floatToE5m2(x), "E5M2 of " + x);
        }
    }

    @Test
    void nanAndInfinity()
    {
        assertEquals(Fp8Floats.E4M3_NAN, Fp8Floats.floatToE4m3(Float.NaN));
        assertEquals((byte)0xFF, Fp8Floats.floatToE4m3(Float.intBitsToFloat(0xFFC0_0000)), "NaN keeps its sign");
        // __NV_SATFINITE: infinities saturate as any other value beyond the largest finite.
        assertEquals(Fp8Floats.E4M3_MAX, Fp8Floats.floatToE4m3(Float.POSITIVE_INFINITY));
        assertEquals((byte)0xFE, Fp8Floats.floatToE4m3(Float.NEGATIVE_INFINITY));
        assertEquals(Fp8Floats.E5M2_MAX, Fp8Floats.floatToE5m2(Float.POSITIVE_INFINITY));
        assertEquals((byte)0xFB, Fp8Floats.floatToE5m2(Float.NEGATIVE_INFINITY));
        assertTrue(Float.isNaN(Fp8Floats.e5m2ToFloat(Fp8Floats.floatToE5m2(Float.NaN))));
        assertEquals(Fp8Floats.E4M3_MAX, Fp8Floats.floatToE4m3(1e30f), "saturates");
        assertEquals((byte)0xFB, Fp8Floats.floatToE5m2(-1e30f), "saturates");
        assertEquals(Fp8Floats.E4M3_MAX, Fp8Floats.floatToE4m3(464f), "the NaN pattern's 480 is out of range");
    }

    /** The pattern nearest {@code x}, ties to the even pattern, beyond the largest finite the largest finite. */
    private static byte nearest(final float x, final boolean e5m2)
    {
        int best = -1;
        double bestDistance = Double.POSITIVE_INFINITY;
        double largest = 0;
        int largestBits = 0;
        for (int b = 0; b < 256; b++)
        {
            final float v = e5m2 ? Fp8Floats.e5m2ToFloat((byte)b) : Fp8Floats.e4m3ToFloat((byte)b);
            if (Float.isNaN(v) || Float.isInfinite(v))
            {
                continue;
            }
            if (Math.signum(v) == Math.signum(x) || v == 0)
            {
                if (Math.abs(v) > largest)
                {
                    largest = Math.abs(v);
                    largestBits = b;
                }
            }
            final double d = Math.abs((double)x - v);
            // Among equal distances the even pattern; of +0 and -0 the one of x's sign.
            if (d < bestDistance || d == bestDistance && ((b & 1) == 0 && (best & 1) == 1 ||
                v == 0 && (b & 0x80) == (Float.floatToRawIntBits(x) >>> 24 & 0x80)))
            {
                best = b;
                bestDistance = d;
            }
        }
        if (Math.abs(x) >= largest)
        {
            return (byte)largestBits;
        }
        return (byte)best;
    }
}
