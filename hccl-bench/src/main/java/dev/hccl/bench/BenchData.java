package dev.hccl.bench;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.bench.check.Reference;

import java.nio.ByteBuffer;
import java.util.function.LongUnaryOperator;

/**
 * Inputs and expected results for {@code -c}, from {@link Reference}, whose inputs make every reduction exact and so
 * independent of the order in which an algorithm combines ranks.
 */
final class BenchData
{
    /** What out-of-place receive buffers hold before a checked run, so that a run that writes nothing is caught. */
    private static final byte POISON = 0x5A;

    private BenchData()
    {
    }

    /**
     * Writes {@code count} inputs of {@code rank}, elements {@code first} on, at the start of {@code buf}.
     */
    static void fill(
        final ByteBuffer buf, final long seed, final int rank, final long first, final int count, final DataType type,
        final ReduceOp op)
    {
        for (int i = 0; i < count; i++)
        {
            Reference.put(buf, i, type, Reference.input(seed, rank, first + i, type, op));
        }
    }

    /**
     * Overwrites the whole of {@code buf} with the poison pattern.
     */
    static void poison(final ByteBuffer buf)
    {
        for (int i = 0; i < buf.capacity(); i++)
        {
            buf.put(i, POISON);
        }
    }

    /**
     * Counts the elements of {@code buf} whose bits differ from the expected ones.
     *
     * @param buf      the result.
     * @param count    elements to compare.
     * @param type     their type.
     * @param expected the expected bits of each element index.
     * @return wrong elements.
     */
    static long countWrong(final ByteBuffer buf, final int count, final DataType type, final LongUnaryOperator expected)
    {
        long wrong = 0;
        for (int i = 0; i < count; i++)
        {
            if (Reference.get(buf, i, type) != expected.applyAsLong(i))
            {
                wrong++;
            }
        }
        return wrong;
    }
}
