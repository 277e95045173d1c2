package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The ring all-reduce, all-gather and reduce-scatter run through each node's ranks in turn, whatever the rank
 * numbering: they cross between nodes once per node, and still give every rank its result.
 */
@Timeout(120)
class RingNodeOrderTest
{
    static Stream<Arguments> layouts()
    {
        return Stream.of(
            // nodes of each rank; messages between nodes of an all-reduce with one segment per chunk
            Arguments.of(new int[] {0, 1, 0, 1}, 2),
            Arguments.of(new int[] {0, 1, 2, 0, 1, 2}, 3),
            Arguments.of(new int[] {0, 0, 1, 1}, 2),
            Arguments.of(new int[] {0, 1, 1, 0, 2}, 3));
    }

    @ParameterizedTest(name = "nodes {0}")
    @MethodSource("layouts")
    void theRingCrossesBetweenNodesOncePerNode(final int[] nodeOfRank, final int crossingEdges) throws Exception
    {
        final int n = nodeOfRank.length;
        final int count = n * 16;
        final Random random = new Random(Arrays.hashCode(nodeOfRank));
        final byte[][] inputs = new byte[n][];
        for (int r = 0; r < n; r++)
        {
            inputs[r] = Elements.inputs(DataType.INT32, ReduceOp.SUM, count, random, true, r);
        }
        final byte[] expected = Elements.reduce(DataType.INT32, ReduceOp.SUM, inputs, 0, count);
        try (LocalGroups groups = new LocalGroups(nodeOfRank, 1 << 20, 5L))
        {
            final List<byte[]> results = groups.run(group ->
            {
                final ByteBuffer buf = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
                buf.put(0, inputs[group.rank()]);
                new RingAlgorithm().allReduce(group, buf, buf, count, DataType.INT32,
                    Reducers.of(DataType.INT32, ReduceOp.SUM));
                final byte[] out = new byte[count * 4];
                buf.get(0, out);
                return out;
            });
            for (int r = 0; r < n; r++)
            {
                assertArrayEquals(expected, results.get(r), "rank " + r);
            }
            // 2(n-1) steps, one message each per rank; only the ring's edges between nodes count.
            assertEquals(crossingEdges * 2 * (n - 1), groups.crossNodeMessages(),
                "messages between nodes for " + Arrays.toString(nodeOfRank));
        }
    }

    @ParameterizedTest(name = "nodes {0}")
    @MethodSource("layouts")
    void allGatherAndReduceScatterCrossBetweenNodesOncePerNode(final int[] nodeOfRank, final int crossingEdges)
        throws Exception
    {
        final int n = nodeOfRank.length;
        final int block = 16;
        final Random random = new Random(Arrays.hashCode(nodeOfRank) + 1L);
        final byte[][] inputs = new byte[n][];
        for (int r = 0; r < n; r++)
        {
            inputs[r] = Elements.inputs(DataType.INT32, ReduceOp.SUM, n * block, random, true, r);
        }
        final byte[] reduced = Elements.reduce(DataType.INT32, ReduceOp.SUM, inputs, 0, n * block);
        try (LocalGroups groups = new LocalGroups(nodeOfRank, 1 << 20, 7L))
        {
            final List<byte[]> gathered = groups.run(group ->
            {
                final ByteBuffer mine = ByteBuffer.allocateDirect(block * 4).order(ByteOrder.nativeOrder());
                mine.put(0, inputs[group.rank()], 0, block * 4);
                final ByteBuffer all = ByteBuffer.allocateDirect(n * block * 4).order(ByteOrder.nativeOrder());
                new RingAlgorithm().allGather(group, mine, all, block, DataType.INT32);
                final byte[] out = new byte[n * block * 4];
                all.get(0, out);
                return out;
            });
            for (int r = 0; r < n; r++)
            {
                for (int owner = 0; owner < n; owner++)
                {
                    assertArrayEquals(Arrays.copyOfRange(inputs[owner], 0, block * 4),
                        Arrays.copyOfRange(gathered.get(r), owner * block * 4, (owner + 1) * block * 4),
                        "rank " + r + ", block of rank " + owner);
                }
            }
            assertEquals(crossingEdges * (n - 1), groups.crossNodeMessages(),
                "all-gather messages between nodes for " + Arrays.toString(nodeOfRank));
        }
        try (LocalGroups groups = new LocalGroups(nodeOfRank, 1 << 20, 9L))
        {
            final List<byte[]> scattered = groups.run(group ->
            {
                final ByteBuffer all = ByteBuffer.allocateDirect(n * block * 4).order(ByteOrder.nativeOrder());
                all.put(0, inputs[group.rank()]);
                final ByteBuffer mine = ByteBuffer.allocateDirect(block * 4).order(ByteOrder.nativeOrder());
                new RingAlgorithm().reduceScatter(group, all, mine, block, DataType.INT32,
                    Reducers.of(DataType.INT32, ReduceOp.SUM));
                final byte[] out = new byte[block * 4];
                mine.get(0, out);
                return out;
            });
            for (int r = 0; r < n; r++)
            {
                assertArrayEquals(Arrays.copyOfRange(reduced, r * block * 4, (r + 1) * block * 4), scattered.get(r),
                    "rank " + r);
            }
            assertEquals(crossingEdges * (n - 1), groups.crossNodeMessages(),
                "reduce-scatter messages between nodes for " + Arrays.toString(nodeOfRank));
        }
    }

}
