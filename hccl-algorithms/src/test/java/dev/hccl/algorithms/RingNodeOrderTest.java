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
 * The ring all-reduce runs through each node's ranks in turn, whatever the rank numbering: it crosses between nodes
 * once per node, and still gives every rank the reduction.
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
            inputs[r] = Elements.inputs(DataType.INT32, ReduceOp.SUM, count, random, true);
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
}
