package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.HalfFloats;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.Reducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

@Timeout(120)
class ReducersTest
{
    private static final int[] COUNTS = { 0, 1, 7, 1000, 4097 };
    /** (dstIndex, srcIndex) pairs: aligned, and unaligned for every element size above 1. */
    private static final int[][] INDICES = { { 0, 0 }, { 3, 5 } };
    private static final ReduceOp[] OPS = { ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN };
    /** Bytes after the destination range that must stay untouched. */
    private static final int TAIL = 9;

    static Stream<Arguments> typesAndOps()
    {
        final List<Arguments> arguments = new ArrayList<>();
        for (final DataType type : DataType.values())
        {
            for (final ReduceOp op : OPS)
            {
                arguments.add(Arguments.of(type, op));
            }
        }
        return arguments.stream();
    }

    @ParameterizedTest
    @MethodSource("typesAndOps")
    void reducesLikeTheReferenceForEveryBufferKindCountAndAlignment(final DataType type, final ReduceOp op)
    {
        final Random random = new Random(31L * type.ordinal() + op.ordinal());
        final Reducer reducer = Reducers.of(type, op);
        for (final int count : COUNTS)
        {
            for (final int[] indices : INDICES)
            {
                for (final BufferKind dstKind : BufferKind.WRITABLE)
                {
                    for (final BufferKind srcKind : BufferKind.values())
                    {
                        final String context = type + " " + op + " count=" + count + " dst=" + dstKind + "@" +
                            indices[0] + " src=" + srcKind + "@" + indices[1];
                        check(reducer, type, op, random, count, indices[0], dstKind, indices[1], srcKind, context);
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("typesAndOps")
    void reducesInPlaceWhenSourceIsTheDestination(final DataType type, final ReduceOp op)
    {
        final Random random = new Random(17L * type.ordinal() + op.ordinal());
        final int count = 1000;
        final int index = 1;
        final byte[] content = new byte[index + count * type.size() + TAIL];
        random.nextBytes(content);
        Samples.fill(type, random, content, index, count);
        final byte[] expected = content.clone();
        applyReference(type, op, expected, index, content, index, count);

        for (final BufferKind kind : BufferKind.WRITABLE)
        {
            final ByteBuffer same = kind.of(content);
            Reducers.of(type, op).reduce(same, index, same, index, count);
            assertElements(type, expected, BufferKind.bytes(same), index, count, type + " " + op + " same " + kind);
            assertUntouchedOutside(content, BufferKind.bytes(same), index, count * type.size(), kind.toString());

            final ByteBuffer viewed = kind.of(content);
            Reducers.of(type, op).reduce(viewed, index, viewed.asReadOnlyBuffer(), index, count);
            assertElements(type, expected, BufferKind.bytes(viewed), index, count, type + " " + op + " view " + kind);
        }
    }

    /**
     * An FP8 element has 256 values, so every pair of operands can be checked, for every operator: widened, combined in
     * float, rounded to nearest even with saturation, NaN canonical.
     */
    @ParameterizedTest
    @EnumSource(value = DataType.class, names = { "FP8_E4M3", "FP8_E5M2" })
    void fp8KernelsGiveTheReferenceForEveryPairOfOperands(final DataType type)
    {
        final byte[] dst = everyPair(8);
        final byte[] src = everyPair(0);
        for (final ReduceOp op : OPS)
        {
            final byte[] expected = dst.clone();
            applyReference(type, op, expected, 0, src, 0, expected.length);
            final ByteBuffer actual = ByteBuffer.allocateDirect(dst.length).put(dst).clear();
            Reducers.of(type, op).reduce(actual, 0, ByteBuffer.wrap(src), 0, dst.length);
            assertElements(type, expected, BufferKind.bytes(actual), 0, dst.length, type + " " + op);
        }
        // The format's own edges, spelled out: saturation, ties to even, infinities, NaN.
        final boolean e4m3 = type == DataType.FP8_E4M3;
        assertSum(type, e4m3 ? 0x7E : 0x7B, e4m3 ? 0x7E : 0x7B, e4m3 ? 0x7E : 0x7B, "max + max saturates");
        assertSum(type, e4m3 ? 0xFE : 0xFB, e4m3 ? 0xFE : 0xFB, e4m3 ? 0xFE : 0xFB, "-max + -max saturates");
        // 1 + 1/16 (E4M3) and 1 + 1/8 (E5M2) are half an ulp of 1: the tie goes to the even 1.0.
        assertSum(type, e4m3 ? 0x38 : 0x3C, e4m3 ? 0x18 : 0x30, e4m3 ? 0x38 : 0x3C, "1 + half an ulp ties to even");
        assertSum(type, 0x7F, e4m3 ? 0x38 : 0x3C, e4m3 ? 0x7F : 0x7E, "NaN + 1 is the canonical NaN");
        if (!e4m3)
        {
            assertSum(type, 0x7C, 0x3C, 0x7B, "inf + 1 saturates to the largest finite, as NCCL's does");
            assertSum(type, 0x7C, 0xFC, 0x7E, "inf + -inf = NaN");
        }
    }

    /**
     * NCCL combines FP8 operands in FP16, not FP32 (its reduce_kernel.h: {@code __nv_fp8_e4m3(__hadd(__half(x),
     * __half(y)))}), and narrows with saturation: every pair of operands, under every operator, must give NCCL's
     * result, NaNs compared as a class. The one difference is deliberate and the same for every floating type here:
     * MAX and MIN of a NaN and a number are NaN, where NCCL's {@code __hmax} and {@code __hmin} return the number.
     */
    @ParameterizedTest
    @EnumSource(value = DataType.class, names = { "FP8_E4M3", "FP8_E5M2" })
    void fp8KernelsGiveWhatNcclComputesThroughFp16(final DataType type)
    {
        final byte[] dst = everyPair(8);
        final byte[] src = everyPair(0);
        for (final ReduceOp op : OPS)
        {
            final ByteBuffer actual = ByteBuffer.wrap(dst.clone());
            Reducers.of(type, op).reduce(actual, 0, ByteBuffer.wrap(src), 0, dst.length);
            for (int i = 0; i < dst.length; i++)
            {
                final float x = throughFp16((float)Reference.fp8Value(type, dst[i] & 0xFF));
                final float y = throughFp16((float)Reference.fp8Value(type, src[i] & 0xFF));
                final float nccl = throughFp16(switch (op)
                {
                    case SUM -> x + y;
                    case PROD -> x * y;
                    // __hmax and __hmin: of a NaN and a number, the number.
                    case MAX -> Float.isNaN(x) ? y : Float.isNaN(y) ? x : Reference.max(x, y);
                    default -> Float.isNaN(x) ? y : Float.isNaN(y) ? x : Reference.min(x, y);
                });
                final double got = Reference.fp8Value(type, actual.get(i) & 0xFF);
                final String what = type + " " + op + " of " + x + " and " + y + ": NCCL " + nccl + ", got " + got;
                final boolean comparison = op == ReduceOp.MAX || op == ReduceOp.MIN;
                if (Float.isNaN(nccl) || comparison && (Float.isNaN(x) || Float.isNaN(y)))
                {
                    assertTrue(Double.isNaN(got), what);
                }
                else
                {
                    assertEquals(Reference.toFp8(type, nccl), actual.get(i) & 0xFF, what);
                }
            }
        }
    }

    /** All 65,536 pairs of FP8 operands in order: element i holds byte {@code i >>> shift}. */
    private static byte[] everyPair(final int shift)
    {
        final byte[] pairs = new byte[256 * 256];
        for (int i = 0; i < pairs.length; i++)
        {
            pairs[i] = (byte)(i >>> shift);
        }
        return pairs;
    }

    /** A float rounded to FP16 and back: FP16 overflows to infinity, which the FP8 narrowing then saturates. */
    private static float throughFp16(final float value)
    {
        return HalfFloats.fp16ToFloat(HalfFloats.floatToFp16(value));
    }

    private static void assertSum(final DataType type, final int a, final int b, final int expected, final String what)
    {
        final ByteBuffer dst = ByteBuffer.wrap(new byte[] { (byte)a });
        Reducers.of(type, ReduceOp.SUM).reduce(dst, 0, ByteBuffer.wrap(new byte[] { (byte)b }), 0, 1);
        assertEquals(Integer.toHexString(expected), Integer.toHexString(dst.get(0) & 0xFF), type + ": " + what);
    }

    @Test
    void avgIsTheSumKernelForFloatingTypesAndRefusedForIntegers()
    {
        for (final DataType type : DataType.values())
        {
            if (type.isFloatingPoint())
            {
                assertSame(Reducers.of(type, ReduceOp.SUM), Reducers.of(type, ReduceOp.AVG), type.toString());
            }
            else
            {
                assertThrows(IllegalArgumentException.class, () -> Reducers.of(type, ReduceOp.AVG), type.toString());
            }
        }
    }

    @Test
    void kernelsAreCachedAndKnowTheirElementSize()
    {
        for (final DataType type : DataType.values())
        {
            for (final ReduceOp op : OPS)
            {
                final Reducer reducer = Reducers.of(type, op);
                assertSame(reducer, Reducers.of(type, op));
                assertEquals(type.size(), reducer.elementSize(), type + " " + op);
            }
        }
        assertNotSame(Reducers.of(DataType.INT8, ReduceOp.MAX), Reducers.of(DataType.UINT8, ReduceOp.MAX));
        assertThrows(NullPointerException.class, () -> Reducers.of(null, ReduceOp.SUM));
        assertThrows(NullPointerException.class, () -> Reducers.of(DataType.FP32, null));
    }

    @Test
    void uint8ComparesUnsignedAndInt8Signed()
    {
        final ByteBuffer dst = ByteBuffer.wrap(new byte[] { (byte)0x80, 0x01, (byte)0xFF });
        final ByteBuffer src = ByteBuffer.wrap(new byte[] { 0x7F, (byte)0xFE, 0x00 });

        final ByteBuffer unsignedMax = ByteBuffer.wrap(dst.array().clone());
        Reducers.of(DataType.UINT8, ReduceOp.MAX).reduce(unsignedMax, 0, src, 0, 3);
        assertArrayEquals(new byte[] { (byte)0x80, (byte)0xFE, (byte)0xFF }, unsignedMax.array());

        final ByteBuffer signedMax = ByteBuffer.wrap(dst.array().clone());
        Reducers.of(DataType.INT8, ReduceOp.MAX).reduce(signedMax, 0, src, 0, 3);
        assertArrayEquals(new byte[] { 0x7F, 0x01, 0x00 }, signedMax.array());

        final ByteBuffer unsignedMin = ByteBuffer.wrap(dst.array().clone());
        Reducers.of(DataType.UINT8, ReduceOp.MIN).reduce(unsignedMin, 0, src, 0, 3);
        assertArrayEquals(new byte[] { 0x7F, 0x01, 0x00 }, unsignedMin.array());
    }

    @Test
    void integersWrapAroundAndFloatsFollowIeee()
    {
        final ByteBuffer ints = ByteBuffer.allocateDirect(8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        ints.putInt(0, Integer.MAX_VALUE).putInt(4, Integer.MIN_VALUE);
        final ByteBuffer ones = ByteBuffer.allocateDirect(8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        ones.putInt(0, 1).putInt(4, -1);
        Reducers.of(DataType.INT32, ReduceOp.SUM).reduce(ints, 0, ones, 0, 2);
        assertEquals(Integer.MIN_VALUE, ints.getInt(0));
        assertEquals(Integer.MAX_VALUE, ints.getInt(4));

        final ByteBuffer floats = ByteBuffer.allocateDirect(12).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        floats.putFloat(0, -0.0f).putFloat(4, Float.NaN).putFloat(8, 1.0f);
        final ByteBuffer others = ByteBuffer.allocateDirect(12).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        others.putFloat(0, 0.0f).putFloat(4, 1.0f).putFloat(8, Float.NaN);
        Reducers.of(DataType.FP32, ReduceOp.MAX).reduce(floats, 0, others, 0, 3);
        assertEquals(0, Float.floatToRawIntBits(floats.getFloat(0)), "max(-0, +0) = +0");
        assertTrue(Float.isNaN(floats.getFloat(4)), "NaN propagates from dst");
        assertTrue(Float.isNaN(floats.getFloat(8)), "NaN propagates from src");

        final ByteBuffer halves = ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        halves.putShort(0, (short)0x7BFF).putShort(2, (short)0x3C00); // 65504, 1.0
        final ByteBuffer addends = ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        addends.putShort(0, (short)0x5000).putShort(2, (short)0x1000); // 32, and 2^-11: half an ulp of 1.0
        Reducers.of(DataType.FP16, ReduceOp.SUM).reduce(halves, 0, addends, 0, 2);
        assertEquals(0x7C00, halves.getShort(0) & 0xFFFF, "65504 + 32 rounds to infinity");
        assertEquals(0x3C00, halves.getShort(2) & 0xFFFF, "1 + half an ulp ties to even");
    }

    @Test
    void refusesBadArguments()
    {
        final Reducer reducer = Reducers.of(DataType.FP32, ReduceOp.SUM);
        final ByteBuffer dst = ByteBuffer.allocateDirect(64);
        final ByteBuffer src = ByteBuffer.allocateDirect(64);

        assertThrows(ReadOnlyBufferException.class, () -> reducer.reduce(dst.asReadOnlyBuffer(), 0, src, 0, 1));
        assertThrows(
            ReadOnlyBufferException.class, () -> reducer.reduce(ByteBuffer.allocate(8).asReadOnlyBuffer(), 0, src, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> reducer.reduce(dst, 0, src, 0, -1));
        assertThrows(IndexOutOfBoundsException.class, () -> reducer.reduce(dst, -1, src, 0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> reducer.reduce(dst, 0, src, -4, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> reducer.reduce(dst, 1, src, 0, 16));
        assertThrows(IndexOutOfBoundsException.class, () -> reducer.reduce(dst, 0, src, 61, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> reducer.reduce(dst, 0, src, 0, Integer.MAX_VALUE));
        // The limit, not the capacity, bounds the range, as for absolute ByteBuffer accessors.
        assertThrows(IndexOutOfBoundsException.class, () -> reducer.reduce(dst.duplicate().limit(60), 0, src, 0, 16));
        assertThrows(IndexOutOfBoundsException.class, () -> reducer.reduce(dst, 0, src.duplicate().limit(63), 0, 16));
        assertThrows(NullPointerException.class, () -> reducer.reduce(null, 0, src, 0, 1));

        // Exactly at the limit is fine.
        reducer.reduce(dst, 0, src, 0, 16);
        reducer.reduce(dst, 64, src, 64, 0);
        assertEquals(0.0f, dst.getFloat(60));
    }

    @ParameterizedTest
    @EnumSource(value = DataType.class)
    void leavesPositionLimitAndOrderAlone(final DataType type)
    {
        final ByteBuffer dst = ByteBuffer.allocateDirect(64).position(5).limit(60);
        final ByteBuffer src = ByteBuffer.allocate(64).position(7).limit(50).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        Reducers.of(type, ReduceOp.SUM).reduce(dst, 1, src, 2, 40 / type.size());
        assertEquals(5, dst.position());
        assertEquals(60, dst.limit());
        assertEquals(java.nio.ByteOrder.BIG_ENDIAN, dst.order());
        assertEquals(7, src.position());
        assertEquals(50, src.limit());
        assertEquals(java.nio.ByteOrder.LITTLE_ENDIAN, src.order());
    }

    private static void check(
        final Reducer reducer,
        final DataType type,
        final ReduceOp op,
        final Random random,
        final int count,
        final int dstIndex,
        final BufferKind dstKind,
        final int srcIndex,
        final BufferKind srcKind,
        final String context)
    {
        final int bytes = count * type.size();
        final byte[] dstContent = new byte[dstIndex + bytes + TAIL];
        final byte[] srcContent = new byte[srcIndex + bytes + TAIL];
        random.nextBytes(dstContent);
        random.nextBytes(srcContent);
        Samples.fill(type, random, dstContent, dstIndex, count);
        Samples.fill(type, random, srcContent, srcIndex, count);

        final ByteBuffer dst = dstKind.of(dstContent);
        final ByteBuffer src = srcKind.of(srcContent);
        final int dstPosition = dst.position();
        final int srcPosition = src.position();

        reducer.reduce(dst, dstIndex, src, srcIndex, count);

        final byte[] expected = dstContent.clone();
        applyReference(type, op, expected, dstIndex, srcContent, srcIndex, count);
        final byte[] actual = BufferKind.bytes(dst);
        assertElements(type, expected, actual, dstIndex, count, context);
        assertUntouchedOutside(dstContent, actual, dstIndex, bytes, context);
        assertArrayEquals(srcContent, BufferKind.bytes(src), context + ": source changed");
        assertEquals(dstPosition, dst.position(), context);
        assertEquals(dstContent.length, dst.limit(), context);
        assertEquals(srcPosition, src.position(), context);
        assertEquals(srcContent.length, src.limit(), context);
    }

    /**
     * Writes {@code dst[i] op src[i]} into {@code dst}, element by element, with plain Java arithmetic on values read
     * through little-endian ByteBuffer getters.
     */
    static void applyReference(
        final DataType type,
        final ReduceOp op,
        final byte[] dstBytes,
        final int dstIndex,
        final byte[] srcBytes,
        final int srcIndex,
        final int count)
    {
        final ByteBuffer dst = ByteBuffer.wrap(dstBytes).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        final ByteBuffer src = Reference.littleEndian(srcBytes);
        final int size = type.size();
        for (int i = 0; i < count; i++)
        {
            final int d = dstIndex + i * size;
            final int s = srcIndex + i * size;
            switch (type)
            {
                case INT8 -> dst.put(d, (byte)integer(op, dst.get(d), src.get(s)));
                case UINT8 -> dst.put(d, (byte)integer(op, dst.get(d) & 0xFF, src.get(s) & 0xFF));
                case INT16 -> dst.putShort(d, (short)integer(op, dst.getShort(d), src.getShort(s)));
                case INT32 -> dst.putInt(d, (int)integer(op, dst.getInt(d), src.getInt(s)));
                case INT64 -> dst.putLong(d, int64(op, dst.getLong(d), src.getLong(s)));
                case FP32 -> dst.putFloat(d, fp32(op, dst.getFloat(d), src.getFloat(s)));
                case FP64 -> dst.putDouble(d, fp64(op, dst.getDouble(d), src.getDouble(s)));
                case FP16 -> dst.putShort(d, (short)Reference.toFp16(fp32(
                    op, (float)Reference.fp16Value(dst.getShort(d) & 0xFFFF),
                    (float)Reference.fp16Value(src.getShort(s) & 0xFFFF))));
                case BF16 -> dst.putShort(d, (short)Reference.toBf16(fp32(
                    op, Float.intBitsToFloat((dst.getShort(d) & 0xFFFF) << 16),
                    Float.intBitsToFloat((src.getShort(s) & 0xFFFF) << 16))));
                case FP8_E4M3, FP8_E5M2 -> dst.put(d, (byte)Reference.toFp8(type, fp32(
                    op, (float)Reference.fp8Value(type, dst.get(d) & 0xFF),
                    (float)Reference.fp8Value(type, src.get(s) & 0xFF))));
            }
        }
    }

    /**
     * Integer ops on values widened to long, so nothing overflows; the caller's cast truncates, which is C's
     * wrap-around. UINT8 values arrive zero-extended, so the signed comparison is the unsigned one.
     */
    private static long integer(final ReduceOp op, final long a, final long b)
    {
        return switch (op)
        {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> a > b ? a : b;
            case MIN -> a < b ? a : b;
            default -> throw new IllegalStateException();
        };
    }

    private static long int64(final ReduceOp op, final long a, final long b)
    {
        return switch (op)
        {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> a > b ? a : b;
            case MIN -> a < b ? a : b;
            default -> throw new IllegalStateException();
        };
    }

    private static float fp32(final ReduceOp op, final float a, final float b)
    {
        return switch (op)
        {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Reference.max(a, b);
            case MIN -> Reference.min(a, b);
            default -> throw new IllegalStateException();
        };
    }

    private static double fp64(final ReduceOp op, final double a, final double b)
    {
        return switch (op)
        {
            case SUM -> a + b;
            case PROD -> a * b;
            case MAX -> Reference.max(a, b);
            case MIN -> Reference.min(a, b);
            default -> throw new IllegalStateException();
        };
    }

    /**
     * Compares elements: bit for bit, except that a NaN expectation accepts any NaN (payloads are not specified), which
     * for the 16-bit formats must be quiet.
     */
    static void assertElements(
        final DataType type, final byte[] expected, final byte[] actual, final int index, final int count,
        final String context)
    {
        final ByteBuffer e = Reference.littleEndian(expected);
        final ByteBuffer a = Reference.littleEndian(actual);
        for (int i = 0; i < count; i++)
        {
            final int at = index + i * type.size();
            final boolean ok;
            final String detail;
            switch (type)
            {
                case FP32 -> {
                    ok = Float.isNaN(e.getFloat(at)) ? Float.isNaN(a.getFloat(at)) :
                        e.getInt(at) == a.getInt(at);
                    detail = e.getFloat(at) + " vs " + a.getFloat(at);
                }
                case FP64 -> {
                    ok = Double.isNaN(e.getDouble(at)) ? Double.isNaN(a.getDouble(at)) :
                        e.getLong(at) == a.getLong(at);
                    detail = e.getDouble(at) + " vs " + a.getDouble(at);
                }
                case FP16 -> {
                    final int want = e.getShort(at) & 0xFFFF;
                    final int got = a.getShort(at) & 0xFFFF;
                    ok = Reference.isFp16NaN(want) ? Reference.isFp16NaN(got) && (got & 0x200) != 0 : want == got;
                    detail = Integer.toHexString(want) + " vs " + Integer.toHexString(got);
                }
                case BF16 -> {
                    final int want = e.getShort(at) & 0xFFFF;
                    final int got = a.getShort(at) & 0xFFFF;
                    ok = Reference.isBf16NaN(want) ? Reference.isBf16NaN(got) && (got & 0x40) != 0 : want == got;
                    detail = Integer.toHexString(want) + " vs " + Integer.toHexString(got);
                }
                default -> {
                    ok = Arrays.equals(expected, at, at + type.size(), actual, at, at + type.size());
                    detail = Arrays.toString(Arrays.copyOfRange(expected, at, at + type.size())) + " vs " +
                        Arrays.toString(Arrays.copyOfRange(actual, at, at + type.size()));
                }
            }
            if (!ok)
            {
                fail(context + ": element " + i + ": expected " + detail);
            }
        }
    }

    static void assertUntouchedOutside(
        final byte[] before, final byte[] after, final int index, final int length, final String context)
    {
        assertEquals(before.length, after.length, context);
        assertArrayEquals(
            Arrays.copyOfRange(before, 0, index), Arrays.copyOfRange(after, 0, index), context + ": bytes before");
        assertArrayEquals(
            Arrays.copyOfRange(before, index + length, before.length),
            Arrays.copyOfRange(after, index + length, after.length), context + ": bytes after");
    }
}
