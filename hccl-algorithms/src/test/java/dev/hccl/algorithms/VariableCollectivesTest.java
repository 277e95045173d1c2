package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The V collectives, scatter and gather over in-memory groups with random delivery delays, tiny segments (so that
 * blocks are many messages) and uneven blocks with empty ones, placed out of order with gaps in the output. Gaps must
 * come back untouched; every message and receive must match (LocalGroups checks).
 */
class VariableCollectivesTest
{
    /** Two INT32 elements per message: every block of more than two elements is pipelined. */
    private static final int SEGMENT_BYTES = 8;
    private static final int POISON = 0x5A5A5A5A;

    private static ByteBuffer ints(final int count)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < count; i++)
        {
            buffer.putInt(4 * i, POISON);
        }
        return buffer;
    }

    private static int value(final int rank, final int index)
    {
        return rank * 1_000_003 + index * 7919 + 1;
    }

    /** Block sizes with empty blocks among them, the same on every rank. */
    private static int[] counts(final int n, final int salt)
    {
        final int[] counts = new int[n];
        for (int b = 0; b < n; b++)
        {
            counts[b] = (b * 5 + salt) % 4 == 0 ? 0 : 1 + (b * 3 + salt) % 6;
        }
        return counts;
    }

    /** Blocks placed last to first, with a gap of {@code b % 2} elements after block {@code b}. */
    private static int[] reversedWithGaps(final int[] counts)
    {
        final int[] displs = new int[counts.length];
        int next = 0;
        for (int b = counts.length - 1; b >= 0; b--)
        {
            displs[b] = next;
            next += counts[b] + b % 2;
        }
        return displs;
    }

    private static int extent(final int[] counts, final int[] displs)
    {
        int end = 0;
        for (int b = 0; b < counts.length; b++)
        {
            end = Math.max(end, displs[b] + counts[b]);
        }
        return end;
    }

    private static int blockOf(final int index, final int[] counts, final int[] displs)
    {
        for (int b = 0; b < counts.length; b++)
        {
            if (index >= displs[b] && index < displs[b] + counts[b])
            {
                return b;
            }
        }
        return -1;
    }

    @ParameterizedTest(name = "worldSize={0}")
    @ValueSource(ints = {1, 2, 3, 5, 8})
    void allGatherVPlacesEveryBlockAndLeavesGapsAlone(final int n) throws Exception
    {
        final int[] counts = counts(n, 1);
        final int[] displs = reversedWithGaps(counts);
        final int extent = extent(counts, displs);
        try (LocalGroups groups = new LocalGroups(n, SEGMENT_BYTES, 11L))
        {
            final List<ByteBuffer> results = groups.run(group ->
            {
                final int r = group.rank();
                final ByteBuffer send = ints(counts[r]);
                for (int i = 0; i < counts[r]; i++)
                {
                    send.putInt(4 * i, value(r, i));
                }
                final ByteBuffer recv = ints(extent);
                new RingVAlgorithm().allGatherV(group, send, recv, counts, displs, DataType.INT32);
                return recv;
            });
            for (final ByteBuffer recv : results)
            {
                for (int i = 0; i < extent; i++)
                {
                    final int b = blockOf(i, counts, displs);
                    assertEquals(b < 0 ? POISON : value(b, i - displs[b]), recv.getInt(4 * i), "element " + i);
                }
            }
        }
    }

    @ParameterizedTest(name = "worldSize={0}")
    @ValueSource(ints = {1, 2, 3, 5, 8})
    void reduceScatterVReducesEveryBlock(final int n) throws Exception
    {
        final int[] counts = counts(n, 2);
        final int[] displs = reversedWithGaps(counts);
        final int extent = extent(counts, displs);
        try (LocalGroups groups = new LocalGroups(n, SEGMENT_BYTES, 12L))
        {
            final List<ByteBuffer> results = groups.run(group ->
            {
                final int r = group.rank();
                final ByteBuffer send = ints(extent);
                for (int i = 0; i < extent; i++)
                {
                    send.putInt(4 * i, value(r, i));
                }
                final ByteBuffer recv = ints(counts[r]);
                new RingVAlgorithm().reduceScatterV(group, send, counts, displs, recv, DataType.INT32,
                    Reducers.of(DataType.INT32, ReduceOp.SUM));
                for (int i = 0; i < extent; i++)
                {
                    assertEquals(value(r, i), send.getInt(4 * i), "the input must not change");
                }
                return recv;
            });
            for (int r = 0; r < n; r++)
            {
                for (int i = 0; i < counts[r]; i++)
                {
                    int want = 0;
                    for (int q = 0; q < n; q++)
                    {
                        want += value(q, displs[r] + i);
                    }
                    assertEquals(want, results.get(r).getInt(4 * i), "rank " + r + " element " + i);
                }
            }
        }
    }

    @Test
    void reduceScatterVGivesTheSameBitsWhateverTheArrivalOrder() throws Exception
    {
        // Floating-point sums of random values depend on the order of reduction: equal bits under different
        // delivery orders show that the order is fixed.
        final int n = 5;
        final int[] counts = {40, 0, 33, 17, 25};
        final int[] displs = reversedWithGaps(counts);
        final int extent = extent(counts, displs);
        byte[][] first = null;
        for (final long seed : new long[]{1, 2, 3})
        {
            try (LocalGroups groups = new LocalGroups(n, SEGMENT_BYTES, seed))
            {
                final List<byte[]> results = groups.run(group ->
                {
                    final Random random = new Random(group.rank());
                    final ByteBuffer send = ints(extent);
                    for (int i = 0; i < extent; i++)
                    {
                        send.putFloat(4 * i, (float)random.nextGaussian() * 1e3f);
                    }
                    final ByteBuffer recv = ints(counts[group.rank()]);
                    new RingVAlgorithm().reduceScatterV(group, send, counts, displs, recv, DataType.FP32,
                        Reducers.of(DataType.FP32, ReduceOp.SUM));
                    final byte[] bits = new byte[recv.capacity()];
                    recv.get(0, bits);
                    return bits;
                });
                if (first == null)
                {
                    first = results.toArray(new byte[0][]);
                }
                else
                {
                    for (int r = 0; r < n; r++)
                    {
                        assertArrayEquals(first[r], results.get(r), "rank " + r + ", delivery seed " + seed);
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "worldSize={0}")
    @ValueSource(ints = {1, 2, 3, 5, 8})
    void allToAllVDeliversEveryPairsBlock(final int n) throws Exception
    {
        // Rank q sends sent[q][j] elements to rank j.
        final int[][] sent = new int[n][n];
        for (int q = 0; q < n; q++)
        {
            for (int j = 0; j < n; j++)
            {
                sent[q][j] = (q * 3 + j * 5 + 1) % 4 == 0 ? 0 : (q + 2 * j) % 5 + 1;
            }
        }
        try (LocalGroups groups = new LocalGroups(n, SEGMENT_BYTES, 13L))
        {
            final List<ByteBuffer> results = groups.run(group ->
            {
                final int r = group.rank();
                final int[] recvCounts = new int[n];
                for (int q = 0; q < n; q++)
                {
                    recvCounts[q] = sent[q][r];
                }
                final int[] sendDispls = reversedWithGaps(sent[r]);
                final ByteBuffer send = ints(extent(sent[r], sendDispls));
                for (int i = 0; i < send.capacity() / 4; i++)
                {
                    send.putInt(4 * i, value(r, i));
                }
                final int[] recvDispls = reversedWithGaps(recvCounts);
                final ByteBuffer recv = ints(extent(recvCounts, recvDispls));
                new PairwiseAllToAllVAlgorithm().allToAllV(group, send, sent[r], sendDispls, recv, recvCounts,
                    recvDispls, DataType.INT32);
                return recv;
            });
            for (int r = 0; r < n; r++)
            {
                final int[] recvCounts = new int[n];
                for (int q = 0; q < n; q++)
                {
                    recvCounts[q] = sent[q][r];
                }
                final int[] recvDispls = reversedWithGaps(recvCounts);
                for (int i = 0; i < extent(recvCounts, recvDispls); i++)
                {
                    final int q = blockOf(i, recvCounts, recvDispls);
                    final int want = q < 0 ? POISON : value(q, reversedWithGaps(sent[q])[r] + i - recvDispls[q]);
                    assertEquals(want, results.get(r).getInt(4 * i), "rank " + r + " element " + i);
                }
            }
        }
    }

    @ParameterizedTest(name = "worldSize={0}")
    @ValueSource(ints = {1, 2, 3, 5, 6, 8})
    void scatterAndGatherFromEveryRoot(final int n) throws Exception
    {
        for (final int count : new int[]{0, 1, 5})
        {
            for (int root = 0; root < n; root++)
            {
                final int theRoot = root;
                try (LocalGroups groups = new LocalGroups(n, SEGMENT_BYTES, 14L + root))
                {
                    final List<int[]> results = groups.run(group ->
                    {
                        final int r = group.rank();
                        final BinomialScatterGatherAlgorithm tree = new BinomialScatterGatherAlgorithm();
                        ByteBuffer send = null;
                        if (r == theRoot)
                        {
                            send = ints(n * count);
                            for (int i = 0; i < n * count; i++)
                            {
                                send.putInt(4 * i, value(r, i));
                            }
                        }
                        final ByteBuffer piece = ints(count);
                        tree.scatter(group, send, piece, count, DataType.INT32, theRoot);
                        // Gather back what was scattered: the root must get its original buffer.
                        final ByteBuffer gathered = r == theRoot ? ints(n * count) : null;
                        tree.gather(group, piece, gathered, count, DataType.INT32, theRoot);
                        final int[] out = new int[count + (gathered == null ? 0 : n * count)];
                        for (int i = 0; i < count; i++)
                        {
                            out[i] = piece.getInt(4 * i);
                        }
                        for (int i = count; i < out.length; i++)
                        {
                            out[i] = gathered.getInt(4 * (i - count));
                        }
                        return out;
                    });
                    for (int r = 0; r < n; r++)
                    {
                        final int[] out = results.get(r);
                        for (int i = 0; i < count; i++)
                        {
                            assertEquals(value(theRoot, r * count + i), out[i], "scatter: rank " + r + " root " +
                                theRoot + " element " + i);
                        }
                        for (int i = count; i < out.length; i++)
                        {
                            assertEquals(value(theRoot, i - count), out[i], "gather: root " + theRoot + " element " +
                                (i - count));
                        }
                    }
                }
            }
        }
    }

    @Test
    void costsGrowWithSizeAndRefuseOtherOperations()
    {
        final CostParameters cost = CostParameters.LOOPBACK_TCP;
        final CostedAlgorithm[] algorithms = {new RingVAlgorithm(), new PairwiseAllToAllVAlgorithm(),
            new BinomialScatterGatherAlgorithm()};
        final Operation[] operations = {Operation.ALL_GATHER_V, Operation.ALL_TO_ALL_V, Operation.SCATTER};
        for (int i = 0; i < algorithms.length; i++)
        {
            final double small = algorithms[i].predictSeconds(operations[i], 8, 1 << 10, cost);
            final double large = algorithms[i].predictSeconds(operations[i], 8, 1 << 20, cost);
            assertTrue(small > 0 && large > small, operations[i] + ": " + small + " then " + large);
            final CostedAlgorithm algorithm = algorithms[i];
            assertThrows(IllegalArgumentException.class,
                () -> algorithm.predictSeconds(Operation.ALL_REDUCE, 8, 1 << 10, cost));
        }
        assertEquals(0.0, new RingVAlgorithm().predictSeconds(Operation.REDUCE_SCATTER_V, 1, 1 << 20, cost));
    }
}
