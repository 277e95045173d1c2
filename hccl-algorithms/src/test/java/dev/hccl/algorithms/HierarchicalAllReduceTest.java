package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.AllReduceAlgorithm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hierarchical all-reduce over simulated nodes: even and uneven nodes, nodes of non-consecutive ranks, one node,
 * one rank per node; every type, reduction and placement against the reference, with the same bits on every rank.
 */
@Timeout(300)
class HierarchicalAllReduceTest
{
    private static final int SEGMENT_BYTES = 1024;

    static Stream<Arguments> layouts()
    {
        final List<Arguments> cases = new ArrayList<>();
        final int[][] layouts = {
            {0, 0, 1, 1}, {0, 0, 0, 1, 1, 1}, {0, 0, 1, 1, 2, 2, 3, 3}, {0, 1, 0, 1}, {0, 1, 2, 0, 1, 2},
            {0, 0, 1, 1, 1}, {0, 1, 1, 1}, {0, 0, 0, 0}, {0, 1, 2}, {0, 0, 0, 1, 1, 2, 2, 2, 2}};
        for (final int[] layout : layouts)
        {
            for (final String across : new String[] {RingAlgorithm.NAME, HalvingDoublingAlgorithm.NAME})
            {
                cases.add(Arguments.of(Arrays.toString(layout), layout, across));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "nodes {0}, across nodes {2}")
    @MethodSource("layouts")
    void everyRankHoldsTheReduction(final String name, final int[] nodeOfRank, final String across) throws Exception
    {
        final AllReduceAlgorithm acrossNodes = across.equals(RingAlgorithm.NAME) ?
            new RingAlgorithm() : new HalvingDoublingAlgorithm();
        final RingAlgorithm ring = new RingAlgorithm();
        final HierarchicalAlgorithm algorithm = new HierarchicalAlgorithm(acrossNodes, ring, ring, ring);
        final int n = nodeOfRank.length;
        final Random random = new Random(Arrays.hashCode(nodeOfRank) * 31L + across.hashCode());
        try (LocalGroups groups = new LocalGroups(nodeOfRank, SEGMENT_BYTES, random.nextLong()))
        {
            for (final DataType type : DataType.values())
            {
                for (final ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN})
                {
                    for (final int count : new int[] {0, 1, n + 1, 1009, type == DataType.FP32 ? 30_011 : 97})
                    {
                        checkAllReduce(groups, n, algorithm, name, type, op, count, random.nextBoolean(), random);
                    }
                }
            }
        }
    }

    static Stream<Arguments> pipelinedLayouts()
    {
        final List<Arguments> cases = new ArrayList<>();
        final int[][] layouts = {{0, 0, 1, 1}, {0, 0, 0, 0, 1, 1, 1, 1}, {0, 1, 0, 1}, {0, 0, 0, 1, 1, 1, 2, 2, 2}};
        for (final int[] layout : layouts)
        {
            for (final String across : new String[] {RingAlgorithm.NAME, HalvingDoublingAlgorithm.NAME,
                DoubleBinaryTreeAlgorithm.NAME})
            {
                cases.add(Arguments.of(Arrays.toString(layout), layout, across));
            }
        }
        return cases.stream();
    }

    /**
     * From {@link TuningTable#HIERARCHICAL_PIPELINE_MIN_BYTES} even layouts overlap the levels with a rail thread: the
     * same result, whatever the pieces' sizes (counts that 4 does not divide, pieces that the ranks of a node do not
     * divide), in place and out of place.
     */
    @ParameterizedTest(name = "nodes {0}, across nodes {2}")
    @MethodSource("pipelinedLayouts")
    void largeBuffersOverlapTheLevelsAndHoldTheSameReduction(
        final String name, final int[] nodeOfRank, final String across) throws Exception
    {
        final AllReduceAlgorithm acrossNodes = AlgorithmCatalog.standard().find(Operation.ALL_REDUCE, across,
            AllReduceAlgorithm.class);
        final RingAlgorithm ring = new RingAlgorithm();
        final HierarchicalAlgorithm algorithm = new HierarchicalAlgorithm(acrossNodes, ring, ring, ring);
        final int n = nodeOfRank.length;
        final Random random = new Random(Arrays.hashCode(nodeOfRank) * 17L + across.hashCode());
        try (LocalGroups groups = new LocalGroups(nodeOfRank, 256 * 1024, random.nextLong()))
        {
            final Object[][] cases = {
                {DataType.FP32, ReduceOp.SUM, (int)(TuningTable.HIERARCHICAL_PIPELINE_MIN_BYTES / 4) + 13, true},
                {DataType.INT8, ReduceOp.MAX, (int)TuningTable.HIERARCHICAL_PIPELINE_MIN_BYTES + 3, false}};
            for (final Object[] c : cases)
            {
                final DataType type = (DataType)c[0];
                final ReduceOp op = (ReduceOp)c[1];
                final int count = (Integer)c[2];
                final boolean inPlace = (Boolean)c[3];
                checkAllReduce(groups, n, algorithm, name, type, op, count, inPlace, random);
            }
        }
    }

    /**
     * Runs one all-reduce on every rank of the groups, random inputs, and checks every rank's result against the
     * reference, and out of place that the input is left as it was.
     */
    private static void checkAllReduce(
        final LocalGroups groups, final int n, final HierarchicalAlgorithm algorithm, final String name,
        final DataType type, final ReduceOp op, final int count, final boolean inPlace, final Random random)
        throws Exception
    {
        final byte[][] inputs = new byte[n][];
        for (int r = 0; r < n; r++)
        {
            inputs[r] = Elements.inputs(type, op, count, random, true, r);
        }
        final byte[] expected = Elements.reduce(type, op, inputs, 0, count);
        final List<byte[]> results = groups.run(group ->
        {
            final ByteBuffer send = direct(inputs[group.rank()]);
            final ByteBuffer recv = inPlace ? send :
                ByteBuffer.allocateDirect(count * type.size()).order(ByteOrder.nativeOrder());
            algorithm.allReduce(group, send, recv, count, type, Reducers.of(type, op));
            final byte[] out = new byte[count * type.size()];
            recv.get(0, out);
            if (!inPlace)
            {
                final byte[] in = new byte[out.length];
                send.get(0, in);
                assertArrayEquals(inputs[group.rank()], in, "the input must not change");
            }
            return out;
        });
        for (int r = 0; r < n; r++)
        {
            final int rank = r;
            final int at = Elements.firstDifference(type, expected, results.get(r));
            assertEquals(-1, at, () -> name + " " + type + " " + op + " x " + count +
                (inPlace ? " in place" : "") + ": rank " + rank + " differs at element " + at);
        }
    }

    @Test
    void theModelPricesTheScheduleThatRunsAtEachSize()
    {
        // The code tries the pipeline first and the model the leaders first: they agree while the ranges are apart.
        assertTrue(TuningTable.HIERARCHICAL_LEADERS_MAX_BYTES < TuningTable.HIERARCHICAL_PIPELINE_MIN_BYTES);
        final HierarchicalAlgorithm algorithm = HierarchicalAlgorithm.overRing();
        final RingAlgorithm ring = new RingAlgorithm();
        final BinomialTreeAlgorithm tree = new BinomialTreeAlgorithm();
        final CostParameters local = CostParameters.LOOPBACK_TCP;
        final CostParameters network = LinkCosts.ETHERNET_10G;
        final LinkCosts links = new LinkCosts(local, network, "test");
        final Operation op = Operation.ALL_REDUCE;
        final long small = TuningTable.HIERARCHICAL_LEADERS_MAX_BYTES;
        final long large = small + 1;
        // 2 x 4: small buffers through the leaders (trees within, the leaders alone on the network), larger ones on
        // the rails (rings within, the network shared by 4).
        final RankLayout twoByFour = RankLayout.blocks(2, 4);
        assertEquals(tree.predictSeconds(Operation.REDUCE, 4, small, local) + ring.predictSeconds(op, 2, small, network) +
            tree.predictSeconds(Operation.BROADCAST, 4, small, local),
            algorithm.predictSeconds(op, twoByFour, small, links), 1e-12);
        assertEquals(algorithm.predictSeconds(op, 2, 4, large, local, network.sharedBy(4)),
            algorithm.predictSeconds(op, twoByFour, large, links), 1e-12);
        // 2 x 2: the rails at every size, as the code runs them.
        final RankLayout twoByTwo = RankLayout.blocks(2, 2);
        assertEquals(algorithm.predictSeconds(op, 2, 2, small, local, network.sharedBy(2)),
            algorithm.predictSeconds(op, twoByTwo, small, links), 1e-12);
        assertTrue(HierarchicalAllReduce.throughLeaders(true, 4, small));
        assertTrue(!HierarchicalAllReduce.throughLeaders(true, 4, large));
        assertTrue(!HierarchicalAllReduce.throughLeaders(true, 2, small));
        assertTrue(HierarchicalAllReduce.throughLeaders(false, 2, large));
    }

    private static ByteBuffer direct(final byte[] bytes)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(bytes.length).order(ByteOrder.nativeOrder());
        b.put(0, bytes);
        return b;
    }
}
