package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.Reducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@code dst = left op right} ({@link Reducer#reduce(ByteBuffer, int, ByteBuffer, int, ByteBuffer, int, int)}), the
 * out-of-place first step of the node arena's all-reduce: bit for bit the two-operand reduce on a copy of the left
 * operand, for every type and operator, buffer kind, count and alignment, with the operands left as they were.
 * {@link VectorKernelsTest} checks the vector loops once C2 has compiled them.
 */
@Timeout(120)
class ThreeOperandReduceTest
{
    private static final int[] COUNTS = { 0, 1, 7, 1000, 4097 };
    /** (dst, left, right) byte indices: aligned, and unaligned by different amounts for every element size. */
    private static final int[][] INDICES = { { 0, 0, 0 }, { 3, 5, 0 }, { 64, 1, 9 } };
    private static final int TAIL = 9;

    static Stream<Arguments> typesAndOps()
    {
        return ReducersTest.typesAndOps();
    }

    @ParameterizedTest
    @MethodSource("typesAndOps")
    void isTheTwoOperandReduceOnACopyOfTheLeftOperand(final DataType type, final ReduceOp op)
    {
        final Random random = new Random(41L * type.ordinal() + op.ordinal());
        final Reducer reducer = Reducers.of(type, op);
        for (final int count : COUNTS)
        {
            for (final int[] at : INDICES)
            {
                for (final BufferKind dstKind : BufferKind.WRITABLE)
                {
                    for (final BufferKind operandKind : BufferKind.values())
                    {
                        final String context = type + " " + op + " count=" + count + " dst=" + dstKind + "@" + at[0] +
                            " operands=" + operandKind + "@" + at[1] + "," + at[2];
                        check(reducer, type, random, count, at, dstKind, operandKind, context);
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("typesAndOps")
    void aLeftOperandThatIsTheDestinationIsTheTwoOperandReduce(final DataType type, final ReduceOp op)
    {
        final Random random = new Random(43L * type.ordinal() + op.ordinal());
        final int count = 1000;
        final byte[] content = new byte[3 + count * type.size() + TAIL];
        final byte[] operand = new byte[count * type.size()];
        random.nextBytes(content);
        Samples.fill(type, random, content, 3, count);
        Samples.fill(type, random, operand, 0, count);
        for (final BufferKind kind : BufferKind.WRITABLE)
        {
            final ByteBuffer expected = kind.of(content);
            Reducers.of(type, op).reduce(expected, 3, ByteBuffer.wrap(operand), 0, count);
            final ByteBuffer actual = kind.of(content);
            Reducers.of(type, op).reduce(actual, 3, actual, 3, ByteBuffer.wrap(operand), 0, count);
            final String context = type + " " + op + " " + kind;
            ReducersTest.assertElements(type, BufferKind.bytes(expected), BufferKind.bytes(actual), 3, count, context);
            ReducersTest.assertUntouchedOutside(content, BufferKind.bytes(actual), 3, count * type.size(), context);
        }
    }

    @Test
    void refusesOperandsThatOverlapTheDestinationOtherwise()
    {
        final Reducer reducer = Reducers.of(DataType.FP32, ReduceOp.SUM);
        final ByteBuffer memory = ByteBuffer.allocateDirect(256).order(ByteOrder.nativeOrder());
        final ByteBuffer other = ByteBuffer.allocateDirect(256);
        // The right operand is the destination, or overlaps it from either side; the left overlaps it in part.
        for (final int[] at : new int[][] { { 0, 128, 0 }, { 0, 128, 60 }, { 60, 128, 0 }, { 0, 4, 128 } })
        {
            assertThrows(IllegalArgumentException.class,
                () -> reducer.reduce(memory, at[0], memory, at[1], memory, at[2], 16), () -> Arrays.toString(at));
        }
        // Through another view of the same memory as well.
        assertThrows(IllegalArgumentException.class,
            () -> reducer.reduce(memory, 0, other, 0, memory.duplicate().position(8).slice(), 0, 16));
        assertThrows(IndexOutOfBoundsException.class, () -> reducer.reduce(memory, 0, other, 200, other, 0, 16));
        assertThrows(IndexOutOfBoundsException.class, () -> reducer.reduce(memory, 0, other, 0, other, 250, 16));
        assertThrows(IllegalArgumentException.class, () -> reducer.reduce(memory, 0, other, 0, other, 0, -1));
        assertThrows(ReadOnlyBufferException.class,
            () -> reducer.reduce(memory.asReadOnlyBuffer(), 0, other, 0, other, 64, 16));

        // Apart, and adjacent, is fine; so are two operands that share memory with each other.
        memory.putFloat(0, 1.5f);
        memory.putFloat(64, 2.0f);
        reducer.reduce(memory, 128, memory, 0, memory, 64, 16);
        assertEquals(3.5f, memory.getFloat(128));
        reducer.reduce(memory, 64, memory, 0, memory, 128, 16);
        assertEquals(5.0f, memory.getFloat(64));
    }

    @Test
    void aReducerWithOnlyTheTwoOperandLoopGetsTheThreeOperandOneByDefault()
    {
        final Reducer integers = new Reducer()
        {
            @Override
            public void reduce(final ByteBuffer dst, final int dstIndex, final ByteBuffer src, final int srcIndex,
                final int count)
            {
                for (int i = 0; i < count; i++)
                {
                    dst.putInt(dstIndex + 4 * i, dst.getInt(dstIndex + 4 * i) - src.getInt(srcIndex + 4 * i));
                }
            }

            @Override
            public int elementSize()
            {
                return 4;
            }
        };
        final ByteBuffer dst = ByteBuffer.allocate(64);
        final ByteBuffer left = ByteBuffer.allocate(64).putInt(8, 10).putInt(12, 20);
        final ByteBuffer right = ByteBuffer.allocate(64).putInt(4, 3).putInt(8, 5);
        integers.reduce(dst, 16, left, 8, right, 4, 2);
        assertEquals(7, dst.getInt(16));
        assertEquals(15, dst.getInt(20));
        assertEquals(0, dst.getInt(24));
        assertEquals(0, left.position());
        // The destination as the left operand: no copy, the two-operand loop.
        integers.reduce(dst, 16, dst, 16, right, 4, 2);
        assertEquals(4, dst.getInt(16));
        assertEquals(10, dst.getInt(20));
    }

    private static void check(final Reducer reducer, final DataType type, final Random random, final int count,
        final int[] at, final BufferKind dstKind, final BufferKind operandKind, final String context)
    {
        final int bytes = count * type.size();
        final byte[] dstContent = new byte[at[0] + bytes + TAIL];
        final byte[] leftContent = new byte[at[1] + bytes + TAIL];
        final byte[] rightContent = new byte[at[2] + bytes + TAIL];
        random.nextBytes(dstContent);
        random.nextBytes(leftContent);
        random.nextBytes(rightContent);
        Samples.fill(type, random, leftContent, at[1], count);
        Samples.fill(type, random, rightContent, at[2], count);

        final ByteBuffer dst = dstKind.of(dstContent).order(ByteOrder.LITTLE_ENDIAN);
        final ByteBuffer left = operandKind.of(leftContent);
        final ByteBuffer right = operandKind.of(rightContent);
        final int position = dst.position();
        reducer.reduce(dst, at[0], left, at[1], right, at[2], count);

        final byte[] expectedContent = dstContent.clone();
        System.arraycopy(leftContent, at[1], expectedContent, at[0], bytes);
        final ByteBuffer expected = BufferKind.DIRECT.of(expectedContent);
        reducer.reduce(expected, at[0], BufferKind.DIRECT.of(rightContent), at[2], count);

        final byte[] actual = BufferKind.bytes(dst);
        ReducersTest.assertElements(type, BufferKind.bytes(expected), actual, at[0], count, context);
        ReducersTest.assertUntouchedOutside(dstContent, actual, at[0], bytes, context);
        assertArrayEquals(leftContent, BufferKind.bytes(left), context + ": left operand changed");
        assertArrayEquals(rightContent, BufferKind.bytes(right), context + ": right operand changed");
        assertEquals(position, dst.position(), context);
        assertEquals(ByteOrder.LITTLE_ENDIAN, dst.order(), context);
    }
}
