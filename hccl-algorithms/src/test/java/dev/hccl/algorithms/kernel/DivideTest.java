package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@Timeout(120)
class DivideTest
{
    /** Powers of two take the multiply path; above 2^24 the double path. */
    private static final int[] DIVISORS = { 1, 2, 3, 7, 8, 10, 1000, 1 << 20, (1 << 24) + 1, Integer.MAX_VALUE };
    private static final int[] COUNTS = { 0, 1, 7, 1000, 4097 };
    private static final int TAIL = 5;

    @ParameterizedTest
    @EnumSource(value = DataType.class, names = { "FP16", "BF16", "FP32", "FP64", "FP8_E4M3", "FP8_E5M2" })
    void dividesLikeTheReference(final DataType type)
    {
        final Random random = new Random(type.ordinal());
        for (final int divisor : DIVISORS)
        {
            for (final int count : COUNTS)
            {
                for (final BufferKind kind : BufferKind.WRITABLE)
                {
                    final int index = 1 + random.nextInt(4);
                    final byte[] content = new byte[index + count * type.size() + TAIL];
                    random.nextBytes(content);
                    Samples.fill(type, random, content, index, count);
                    final ByteBuffer buffer = kind.of(content);
                    final int position = buffer.position();

                    Reducers.divide(buffer, index, count, type, divisor);

                    final String context = type + " / " + divisor + " count=" + count + " " + kind + "@" + index;
                    final byte[] actual = BufferKind.bytes(buffer);
                    if (divisor == 1)
                    {
                        // Dividing by one is documented as a no-op: even signalling NaNs stay as they are.
                        assertArrayEquals(content, actual, context);
                    }
                    else
                    {
                        ReducersTest.assertElements(
                            type, expected(type, content, index, count, divisor), actual, index, count, context);
                    }
                    ReducersTest.assertUntouchedOutside(content, actual, index, count * type.size(), context);
                    assertEquals(position, buffer.position(), context);
                    assertEquals(content.length, buffer.limit(), context);
                }
            }
        }
    }

    @Test
    void averagesWithHandComputedValues()
    {
        final ByteBuffer floats = ByteBuffer.allocateDirect(12).order(ByteOrder.LITTLE_ENDIAN);
        floats.putFloat(0, 1.0f).putFloat(4, -0.0f).putFloat(8, Float.MIN_VALUE);
        Reducers.divide(floats, 0, 3, DataType.FP32, 3);
        assertEquals(0x3EAA_AAAB, Float.floatToRawIntBits(floats.getFloat(0)), "1/3 rounded to nearest");
        assertEquals(0x8000_0000, Float.floatToRawIntBits(floats.getFloat(4)), "-0 stays -0");
        assertEquals(0, Float.floatToRawIntBits(floats.getFloat(8)), "MIN_VALUE / 3 underflows to 0");

        final ByteBuffer halves = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        halves.putShort(0, (short)0x3C00).putShort(2, (short)0x0001); // 1.0 and the smallest subnormal
        Reducers.divide(halves, 0, 2, DataType.FP16, 2);
        assertEquals(0x3800, halves.getShort(0) & 0xFFFF, "0.5");
        assertEquals(0x0000, halves.getShort(2) & 0xFFFF, "2^-25 ties to even zero");

        final ByteBuffer brains = ByteBuffer.allocate(2).order(ByteOrder.LITTLE_ENDIAN);
        brains.putShort(0, (short)0x4040); // 3.0
        Reducers.divide(brains, 0, 1, DataType.BF16, 3);
        assertEquals(0x3F80, brains.getShort(0) & 0xFFFF, "1.0");

        final ByteBuffer e4m3 = ByteBuffer.wrap(new byte[] { 0x7E, 0x01, (byte)0xFE });
        Reducers.divide(e4m3, 0, 3, DataType.FP8_E4M3, 3);
        assertEquals(0x71, e4m3.get(0) & 0xFF, "448 / 3 = 149.3 rounds to 144");
        assertEquals(0x00, e4m3.get(1) & 0xFF, "2^-9 / 3 rounds to zero");
        assertEquals(0xF1, e4m3.get(2) & 0xFF, "-448 / 3 rounds to -144");
        final ByteBuffer e5m2 = ByteBuffer.wrap(new byte[] { 0x3C, 0x7C, 0x01 });
        Reducers.divide(e5m2, 0, 3, DataType.FP8_E5M2, 2);
        assertEquals(0x38, e5m2.get(0) & 0xFF, "1 / 2 = 0.5");
        assertEquals(0x7B, e5m2.get(1) & 0xFF, "inf / 2 saturates to the largest finite");
        assertEquals(0x00, e5m2.get(2) & 0xFF, "2^-16 / 2 ties to even zero");
    }

    @ParameterizedTest
    @EnumSource(value = DataType.class, names = { "INT8", "UINT8", "INT16", "INT32", "INT64" })
    void refusesIntegerTypes(final DataType type)
    {
        assertThrows(
            IllegalArgumentException.class, () -> Reducers.divide(ByteBuffer.allocateDirect(64), 0, 1, type, 2));
    }

    @Test
    void refusesBadArguments()
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(64);
        assertThrows(IllegalArgumentException.class, () -> Reducers.divide(buffer, 0, 1, DataType.FP32, 0));
        assertThrows(IllegalArgumentException.class, () -> Reducers.divide(buffer, 0, 1, DataType.FP32, -2));
        assertThrows(IllegalArgumentException.class, () -> Reducers.divide(buffer, 0, -1, DataType.FP32, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> Reducers.divide(buffer, 1, 16, DataType.FP32, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> Reducers.divide(buffer, -1, 1, DataType.FP32, 2));
        assertThrows(
            ReadOnlyBufferException.class, () -> Reducers.divide(buffer.asReadOnlyBuffer(), 0, 1, DataType.FP32, 2));
        assertThrows(NullPointerException.class, () -> Reducers.divide(null, 0, 1, DataType.FP32, 2));
        assertThrows(NullPointerException.class, () -> Reducers.divide(buffer, 0, 1, null, 2));
    }

    /**
     * The quotient per the contract: FP32 and FP64 correctly rounded (for FP32 via double, whose 53 bits make the
     * second rounding harmless); FP16, BF16 and FP8 divided as floats (correctly rounded float quotient) and rounded by
     * the reference encoders.
     */
    private static byte[] expected(
        final DataType type, final byte[] content, final int index, final int count, final int divisor)
    {
        final byte[] expected = content.clone();
        final ByteBuffer buffer = ByteBuffer.wrap(expected).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++)
        {
            final int at = index + i * type.size();
            switch (type)
            {
                case FP32 -> buffer.putFloat(at, (float)(buffer.getFloat(at) / (double)divisor));
                case FP64 -> buffer.putDouble(at, buffer.getDouble(at) / divisor);
                case FP16 -> buffer.putShort(at, (short)Reference.toFp16(
                    (float)(Reference.fp16Value(buffer.getShort(at) & 0xFFFF) / divisor)));
                case BF16 -> buffer.putShort(at, (short)Reference.toBf16(
                    (float)(Float.intBitsToFloat((buffer.getShort(at) & 0xFFFF) << 16) / (double)divisor)));
                case FP8_E4M3, FP8_E5M2 -> buffer.put(at, (byte)Reference.toFp8(
                    type, (float)(Reference.fp8Value(type, buffer.get(at) & 0xFF) / divisor)));
                default -> throw new IllegalStateException();
            }
        }
        return expected;
    }
}
