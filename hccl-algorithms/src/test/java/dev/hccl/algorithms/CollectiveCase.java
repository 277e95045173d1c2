package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceAlgorithm;
import dev.hccl.api.spi.ReduceScatterAlgorithm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;

/**
 * Test support: one collective operation of one algorithm with concrete inputs for every rank, run on a rank the way
 * {@code CommunicatorImpl} calls the SPI (the same buffers for in place), and its reference result.
 *
 * @param entry    the algorithm and operation.
 * @param size     the world size.
 * @param type     element type.
 * @param op       reduction, null for operations that do not reduce.
 * @param count    elements: of the buffer (all-reduce, broadcast, reduce) or per block (all-gather, reduce-scatter).
 * @param inPlace  whether the output is the input's memory as NCCL defines it.
 * @param root     the root of broadcast and reduce, else 0.
 * @param inputs   each rank's input bytes.
 * @param expected each rank's expected output bytes, null for a rank that has none (reduce off the root).
 */
record CollectiveCase(
    Entry entry,
    int size,
    DataType type,
    ReduceOp op,
    int count,
    boolean inPlace,
    int root,
    byte[][] inputs,
    byte[][] expected)
{
    /** What output bytes that the algorithm must overwrite start as. */
    private static final byte GARBAGE = (byte)0xA5;

    /**
     * An algorithm and one operation of it: a row of the matrix.
     *
     * @param algorithm the algorithm instance.
     * @param operation the operation it runs.
     */
    record Entry(Object algorithm, Operation operation)
    {
        String name()
        {
            return algorithm.getClass().getSimpleName();
        }

        boolean reduces()
        {
            return operation == Operation.ALL_REDUCE || operation == Operation.REDUCE_SCATTER ||
                operation == Operation.REDUCE;
        }

        boolean rooted()
        {
            return operation == Operation.BROADCAST || operation == Operation.REDUCE;
        }

        /** Whether in place and out of place differ (broadcast has one buffer). */
        boolean hasPlacement()
        {
            return operation != Operation.BROADCAST;
        }

        @Override
        public String toString()
        {
            return name() + " " + operation.displayName();
        }
    }

    /**
     * Draws inputs and computes the reference.
     *
     * @param exact false for arbitrary floating-point inputs, whose result is checked only for agreement.
     */
    static CollectiveCase of(
        final Entry entry, final int size, final DataType type, final ReduceOp op, final int count,
        final boolean inPlace, final int root, final long seed, final boolean exact)
    {
        final Random random = new Random(seed);
        final int inputCount = entry.operation() == Operation.REDUCE_SCATTER ? count * size : count;
        final byte[][] inputs = new byte[size][];
        for (int r = 0; r < size; r++)
        {
            inputs[r] = Elements.inputs(type, op, inputCount, random, exact, r);
        }
        final byte[][] expected = new byte[size][];
        switch (entry.operation())
        {
            case ALL_REDUCE ->
            {
                final byte[] all = Elements.reduce(type, op, inputs, 0, count);
                Arrays.fill(expected, all);
            }
            case REDUCE -> expected[root] = Elements.reduce(type, op, inputs, 0, count);
            case REDUCE_SCATTER ->
            {
                for (int r = 0; r < size; r++)
                {
                    expected[r] = Elements.reduce(type, op, inputs, r * count, count);
                }
            }
            case ALL_GATHER ->
            {
                final int blockBytes = count * type.size();
                final byte[] all = new byte[size * blockBytes];
                for (int r = 0; r < size; r++)
                {
                    System.arraycopy(inputs[r], 0, all, r * blockBytes, blockBytes);
                }
                Arrays.fill(expected, all);
            }
            case BROADCAST -> Arrays.fill(expected, inputs[root]);
            default -> throw new IllegalArgumentException(entry.operation().toString());
        }
        return new CollectiveCase(entry, size, type, op, count, inPlace, root, inputs, expected);
    }

    /**
     * Runs this rank's part.
     *
     * @return the output bytes, or null for a rank without output.
     * @throws AssertionError when an input the algorithm may only read has changed.
     */
    byte[] run(final PeerGroup group)
    {
        final int r = group.rank();
        final int bytes = count * type.size();
        final ByteBuffer result;
        ByteBuffer input = null;
        switch (entry.operation())
        {
            case ALL_REDUCE ->
            {
                input = direct(inputs[r]);
                result = inPlace ? input : garbage(bytes);
                ((AllReduceAlgorithm)entry.algorithm()).allReduce(group, input, result, count, type, reducer());
            }
            case REDUCE ->
            {
                input = direct(inputs[r]);
                // As CommunicatorImpl: off the root there is no receive buffer; at the root in place is send == recv.
                result = r != root ? null : inPlace ? input : garbage(bytes);
                ((ReduceAlgorithm)entry.algorithm()).reduce(group, input, result, count, type, reducer(), root);
            }
            case REDUCE_SCATTER ->
            {
                input = direct(inputs[r]);
                // In place (NCCL): recv is this rank's block of send.
                result = inPlace ? input.slice(r * bytes, bytes).order(ByteOrder.nativeOrder()) : garbage(bytes);
                ((ReduceScatterAlgorithm)entry.algorithm()).reduceScatter(group, input, result, count, type,
                    reducer());
            }
            case ALL_GATHER ->
            {
                result = garbage(size * bytes);
                if (inPlace)
                {
                    // In place (NCCL): send is this rank's block of recv, already holding its data.
                    result.put(r * bytes, inputs[r]);
                    ((AllGatherAlgorithm)entry.algorithm()).allGather(group,
                        result.slice(r * bytes, bytes).order(ByteOrder.nativeOrder()), result, count, type);
                }
                else
                {
                    input = direct(inputs[r]);
                    ((AllGatherAlgorithm)entry.algorithm()).allGather(group, input, result, count, type);
                }
            }
            case BROADCAST ->
            {
                result = r == root ? direct(inputs[r]) : garbage(bytes);
                ((BroadcastAlgorithm)entry.algorithm()).broadcast(group, result, count, type, root);
            }
            default -> throw new IllegalArgumentException(entry.operation().toString());
        }
        if (input != null && input != result && !(inPlace && entry.operation() == Operation.REDUCE_SCATTER))
        {
            final byte[] after = new byte[input.capacity()];
            input.get(0, after);
            if (!Arrays.equals(inputs[r], after))
            {
                throw new AssertionError(this + ": rank " + r + " changed its send buffer");
            }
        }
        if (result == null)
        {
            return null;
        }
        final byte[] out = new byte[result.capacity()];
        result.get(0, out);
        return out;
    }

    /**
     * Compares a rank's output with the reference.
     *
     * @return null when it matches, else what differs.
     */
    String check(final int rank, final byte[] actual)
    {
        if (expected[rank] == null)
        {
            return actual == null ? null : "rank " + rank + " has output where none was expected";
        }
        final int at = Elements.firstDifference(type, expected[rank], actual);
        if (at < 0)
        {
            return null;
        }
        return this + ": rank " + rank + " element " + at + " is " + Elements.describe(type, actual, at) +
            ", expected " + Elements.describe(type, expected[rank], at) + " (" + actual.length + " bytes, expected " +
            expected[rank].length + ")";
    }

    private dev.hccl.api.spi.Reducer reducer()
    {
        return Reducers.of(type, op);
    }

    private static ByteBuffer direct(final byte[] content)
    {
        final ByteBuffer buf = ByteBuffer.allocateDirect(content.length).order(ByteOrder.nativeOrder());
        buf.put(0, content);
        return buf;
    }

    private static ByteBuffer garbage(final int bytes)
    {
        final ByteBuffer buf = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        final byte[] fill = new byte[bytes];
        Arrays.fill(fill, GARBAGE);
        buf.put(0, fill);
        return buf;
    }

    @Override
    public String toString()
    {
        return entry + " n=" + size + " " + type + (op == null ? "" : " " + op) + " count=" + count +
            (entry.hasPlacement() ? inPlace ? " in-place" : " out-of-place" : "") +
            (entry.rooted() ? " root=" + root : "");
    }
}
