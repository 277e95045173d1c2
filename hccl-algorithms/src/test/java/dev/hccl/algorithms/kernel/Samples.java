package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * Random elements of each data type, a quarter of them edge values (extremes, zeros, infinities, NaNs, subnormals), the
 * rest random bit patterns or ordinary magnitudes so that sums and products are not all overflow.
 */
final class Samples
{
    private static final long[] INT8_EDGES = { 0, 1, -1, 127, -128, 2, 64, -64 };
    private static final long[] INT16_EDGES = { 0, 1, -1, Short.MAX_VALUE, Short.MIN_VALUE, 256, -256, 181 };
    private static final long[] INT32_EDGES = { 0, 1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 65536, 46341 };
    private static final long[] INT64_EDGES = { 0, 1, -1, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 32, 3037000500L };
    private static final float[] FLOAT_EDGES = {
        0.0f, -0.0f, 1.0f, -1.0f, Float.NaN, Float.intBitsToFloat(0xFFC0_0001), Float.POSITIVE_INFINITY,
        Float.NEGATIVE_INFINITY, Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL, Float.MAX_VALUE, -Float.MAX_VALUE,
        Float.intBitsToFloat(0x007F_FFFF), 0x1p-140f };
    private static final double[] DOUBLE_EDGES = {
        0.0, -0.0, 1.0, -1.0, Double.NaN, Double.longBitsToDouble(0xFFF8_0000_0000_0001L), Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, Double.MAX_VALUE,
        -Double.MAX_VALUE, Double.longBitsToDouble(0x000F_FFFF_FFFF_FFFFL) };
    private static final int[] FP16_EDGES = {
        0x0000, 0x8000, 0x3C00, 0xBC00, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00,
        0x7D00, 0x7BFE, 0x5BFF };
    private static final int[] BF16_EDGES = {
        0x0000, 0x8000, 0x3F80, 0xBF80, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0,
        0x7FA0, 0x7F7E };

    private static final int[] FP8_E4M3_EDGES = {
        0x00, 0x80, 0x38, 0xB8, 0x01, 0x81, 0x07, 0x08, 0x7E, 0xFE, 0x7F, 0xFF, 0x77, 0x3F };
    private static final int[] FP8_E5M2_EDGES = {
        0x00, 0x80, 0x3C, 0xBC, 0x01, 0x81, 0x03, 0x04, 0x7B, 0xFB, 0x7C, 0xFC, 0x7E, 0xFE, 0x7D, 0x3F };

    private Samples()
    {
    }

    /**
     * {@code count} little-endian elements of {@code type} at byte {@code offset} of {@code bytes}.
     */
    static void fill(final DataType type, final Random random, final byte[] bytes, final int offset, final int count)
    {
        final ByteBuffer out = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++)
        {
            final int at = offset + i * type.size();
            final boolean edge = random.nextInt(4) == 0;
            final boolean ordinary = random.nextBoolean();
            switch (type)
            {
                case INT8, UINT8 -> out.put(at, (byte)(edge ? pick(INT8_EDGES, random) : random.nextInt()));
                case INT16 -> out.putShort(at, (short)(edge ? pick(INT16_EDGES, random) : random.nextInt()));
                case INT32 -> out.putInt(at, (int)(edge ? pick(INT32_EDGES, random) :
                    ordinary ? random.nextInt(100_000) - 50_000 : random.nextInt()));
                case INT64 -> out.putLong(at, edge ? pick(INT64_EDGES, random) :
                    ordinary ? random.nextInt() : random.nextLong());
                case FP32 -> out.putFloat(at, edge ? FLOAT_EDGES[random.nextInt(FLOAT_EDGES.length)] :
                    ordinary ? (float)(random.nextGaussian() * 1000) : Float.intBitsToFloat(random.nextInt()));
                case FP64 -> out.putDouble(at, edge ? DOUBLE_EDGES[random.nextInt(DOUBLE_EDGES.length)] :
                    ordinary ? random.nextGaussian() * 1000 : Double.longBitsToDouble(random.nextLong()));
                case FP16 -> out.putShort(at, (short)(edge ? FP16_EDGES[random.nextInt(FP16_EDGES.length)] :
                    ordinary ? Reference.toFp16((float)(random.nextGaussian() * 100)) : random.nextInt()));
                case BF16 -> out.putShort(at, (short)(edge ? BF16_EDGES[random.nextInt(BF16_EDGES.length)] :
                    ordinary ? Reference.toBf16((float)(random.nextGaussian() * 100)) : random.nextInt()));
                case FP8_E4M3 -> out.put(at, (byte)(edge ? FP8_E4M3_EDGES[random.nextInt(FP8_E4M3_EDGES.length)] :
                    ordinary ? Reference.toFp8(type, (float)(random.nextGaussian() * 10)) : random.nextInt()));
                case FP8_E5M2 -> out.put(at, (byte)(edge ? FP8_E5M2_EDGES[random.nextInt(FP8_E5M2_EDGES.length)] :
                    ordinary ? Reference.toFp8(type, (float)(random.nextGaussian() * 10)) : random.nextInt()));
            }
        }
    }

    private static long pick(final long[] values, final Random random)
    {
        return values[random.nextInt(values.length)];
    }
}
