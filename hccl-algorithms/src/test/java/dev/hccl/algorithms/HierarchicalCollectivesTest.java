package dev.hccl.algorithms;

import dev.hccl.algorithms.CollectiveCase.Entry;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import dev.hccl.api.spi.Reducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hierarchical all-gather, reduce-scatter and broadcast over simulated nodes: even nodes (2x2, 2x4, 3x2), one rank
 * per node, one node, uneven nodes, nodes of non-consecutive ranks; against the reference of {@link CollectiveCase},
 * so every rank holds the reference's bits, in place and out of place, every root. Also: inner algorithms other than
 * the ring and one that scribbles over scratch slots 0 and 1, the same bits whatever the arrival order, the bytes
 * that cross between nodes, and the cost formulas.
 */
@Timeout(600)
class HierarchicalCollectivesTest
{
    /** Small, so that 1009 elements make several segments per chunk. */
    private static final int SMALL_SEGMENT_BYTES = 256;
    private static final int LARGE_SEGMENT_BYTES = 4096;
    private static final int[] SMALL_COUNTS = {0, 1, 7, 1009};
    /** Several segments per block even at the large segment size, and 64 KiB and more for broadcast's ring. */
    private static final int LARGE_COUNT = 65537;
    private static final DataType[] TYPES = {DataType.FP32, DataType.INT32, DataType.FP16, DataType.INT8};
    private static final ReduceOp[] OPS = {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN};
    private static final Operation[] OPERATIONS = {Operation.ALL_GATHER, Operation.REDUCE_SCATTER, Operation.BROADCAST};

    private static final int[][] LAYOUTS = {
        {0, 0, 1, 1},
        {0, 0, 0, 0, 1, 1, 1, 1},
        {0, 0, 1, 1, 2, 2},
        {0, 1, 2, 3},
        {0, 0, 0, 0},
        {0, 0, 0, 1},
        {0, 0, 1, 1, 1, 2},
        {0, 1, 0, 1},
        {1, 0, 0, 1, 1, 0},
        {0, 1, 1, 0, 1}};

    static Stream<Arguments> layoutsAndOperations()
    {
        final List<Arguments> arguments = new ArrayList<>();
        for (final int[] layout : LAYOUTS)
        {
            for (final Operation op : OPERATIONS)
            {
                arguments.add(Arguments.of(Arrays.toString(layout), layout, op));
            }
        }
        return arguments.stream();
    }

    @ParameterizedTest(name = "nodes {0} {2}")
    @MethodSource("layoutsAndOperations")
    void matchesTheReference(final String name, final int[] nodeOfRank, final Operation operation) throws Exception
    {
        final Entry entry = new Entry(HierarchicalAlgorithm.overRing(), operation);
        final int n = nodeOfRank.length;
        final List<Supplier<CollectiveCase>> small = new ArrayList<>();
        for (final int count : SMALL_COUNTS)
        {
            for (final DataType type : TYPES)
            {
                // Every reduction on the small counts; the sum and the maximum at 1009, where segments show.
                final ReduceOp[] ops = !entry.reduces() ? new ReduceOp[] {null} :
                    count < 1009 ? OPS : new ReduceOp[] {ReduceOp.SUM, ReduceOp.MAX};
                addCases(small, entry, n, type, ops, count, allRoots(n));
            }
        }
        check(name, nodeOfRank, SMALL_SEGMENT_BYTES, 17L, small);

        final List<Supplier<CollectiveCase>> large = new ArrayList<>();
        addCases(large, entry, n, DataType.FP32, new ReduceOp[] {entry.reduces() ? ReduceOp.SUM : null},
            LARGE_COUNT, new int[] {0, n - 1});
        addCases(large, entry, n, DataType.INT8, new ReduceOp[] {entry.reduces() ? ReduceOp.MAX : null},
            LARGE_COUNT, new int[] {n / 2});
        check(name, nodeOfRank, LARGE_SEGMENT_BYTES, null, large);
    }

    static Stream<Arguments> innerAlgorithms()
    {
        final List<Arguments> arguments = new ArrayList<>();
        for (final int[] layout : new int[][] {{0, 0, 0, 0, 1, 1, 1, 1}, {0, 0, 1, 1, 2, 2}, {0, 0, 1, 1, 1, 2},
            {1, 0, 0, 1, 1, 0}})
        {
            for (final String inner : new String[] {"H-D_R, NB, tree", "scribbling ring"})
            {
                arguments.add(Arguments.of(Arrays.toString(layout), layout, inner));
            }
        }
        return arguments.stream();
    }

    /**
     * Other algorithms between nodes, and one that overwrites scratch slots 0 and 1 before each call: the schedules
     * hold nothing there across a call into an inner algorithm.
     */
    @ParameterizedTest(name = "nodes {0} across nodes {2}")
    @MethodSource("innerAlgorithms")
    void anyAlgorithmBetweenNodes(final String name, final int[] nodeOfRank, final String inner) throws Exception
    {
        final HierarchicalAlgorithm algorithm;
        if (inner.startsWith("scribbling"))
        {
            final Scribbler scribbler = new Scribbler();
            algorithm = new HierarchicalAlgorithm(scribbler, scribbler, scribbler, scribbler);
        }
        else
        {
            final HalvingDoublingAlgorithm hd = new HalvingDoublingAlgorithm();
            algorithm = new HierarchicalAlgorithm(hd, new BruckAllGatherAlgorithm(), hd, new BinomialTreeAlgorithm());
        }
        final int n = nodeOfRank.length;
        final List<Supplier<CollectiveCase>> cases = new ArrayList<>();
        for (final Operation operation : new Operation[] {
            Operation.ALL_REDUCE, Operation.ALL_GATHER, Operation.REDUCE_SCATTER, Operation.BROADCAST})
        {
            final Entry entry = new Entry(algorithm, operation);
            for (final int count : new int[] {1, 7, 1009})
            {
                addCases(cases, entry, n, DataType.FP32, new ReduceOp[] {entry.reduces() ? ReduceOp.SUM : null},
                    count, new int[] {0, n - 1});
            }
        }
        check(name + " across nodes " + inner, nodeOfRank, SMALL_SEGMENT_BYTES, 23L, cases);
    }

    static Stream<Arguments> reducingLayouts()
    {
        final List<Arguments> arguments = new ArrayList<>();
        for (final int[] layout : new int[][] {{0, 0, 0, 0, 1, 1, 1, 1}, {0, 0, 1, 1, 1, 2}, {1, 0, 0, 1, 1, 0}})
        {
            for (final Operation op : new Operation[] {Operation.ALL_REDUCE, Operation.REDUCE_SCATTER})
            {
                arguments.add(Arguments.of(Arrays.toString(layout), layout, op));
            }
        }
        return arguments.stream();
    }

    /**
     * Arbitrary floating-point inputs, whose sum depends on the order of the additions, delivered in random orders:
     * every run gives the same bits, and for all-reduce every rank the same.
     */
    @ParameterizedTest(name = "nodes {0} {2}")
    @MethodSource("reducingLayouts")
    void sameBitsWhateverTheArrivalOrder(final String name, final int[] nodeOfRank, final Operation operation)
        throws Exception
    {
        final Entry entry = new Entry(HierarchicalAlgorithm.overRing(), operation);
        final int n = nodeOfRank.length;
        for (final DataType type : new DataType[] {DataType.FP32, DataType.FP16})
        {
            byte[][] first = null;
            for (int run = 0; run < 3; run++)
            {
                final List<byte[][]> outputs = new ArrayList<>();
                final long seed = 41L * n + type.ordinal();
                final boolean inPlace = run == 1;
                AlgorithmMatrixTest.runCases(nodeOfRank, SMALL_SEGMENT_BYTES, 1000L + run,
                    List.of(() -> CollectiveCase.of(entry, n, type, ReduceOp.SUM, 1009, inPlace, 0, seed, false)),
                    (c, out) -> outputs.add(out));
                final byte[][] out = outputs.get(0);
                for (int r = 1; r < n && operation == Operation.ALL_REDUCE; r++)
                {
                    assertArrayEquals(out[0], out[r], name + " " + type + " run " + run + ": rank " + r);
                }
                if (first == null)
                {
                    first = out;
                }
                for (int r = 0; r < n; r++)
                {
                    assertArrayEquals(first[r], out[r], name + " " + type + " run " + run + ": rank " + r);
                }
            }
        }
    }

    /**
     * On 2 nodes of 4 ranks, the all-gather and reduce-scatter send each block between nodes once per remote node:
     * {@code N (N-1) L} blocks in all, where the flat ring over ranks 0..7 sends {@code 2 (n-1)}.
     */
    @Test
    void blocksCrossBetweenNodesOncePerRemoteNode() throws Exception
    {
        final int[] nodeOfRank = {0, 0, 0, 0, 1, 1, 1, 1};
        final int n = nodeOfRank.length;
        final int count = 64;
        final int blockBytes = count * DataType.FP32.size();
        final RingAlgorithm ring = new RingAlgorithm();
        final HierarchicalAlgorithm hierarchical = HierarchicalAlgorithm.overRing();
        for (final Operation operation : new Operation[] {Operation.ALL_GATHER, Operation.REDUCE_SCATTER})
        {
            final long flat = crossNodeBytes(nodeOfRank, new Entry(ring, operation), count);
            final long twoLevel = crossNodeBytes(nodeOfRank, new Entry(hierarchical, operation), count);
            assertEquals(2L * (n - 1) * blockBytes, flat, operation + ": the flat ring");
            assertEquals(2L * 1 * 4 * blockBytes, twoLevel, operation + ": hierarchical");
            assertTrue(twoLevel < flat, operation + ": " + twoLevel + " < " + flat);
        }
    }

    @Test
    void withoutATopologyItCostsWhatTheRingOrTheTreeCosts()
    {
        final CostParameters cost = CostParameters.LOOPBACK_TCP;
        final HierarchicalAlgorithm hierarchical = HierarchicalAlgorithm.overRing();
        final RingAlgorithm ring = new RingAlgorithm();
        final BinomialTreeAlgorithm tree = new BinomialTreeAlgorithm();
        for (final int n : new int[] {1, 2, 3, 8})
        {
            for (final long bytes : new long[] {0, 1000, 64 * 1024, 1 << 24})
            {
                for (final Operation op : new Operation[] {
                    Operation.ALL_REDUCE, Operation.ALL_GATHER, Operation.REDUCE_SCATTER})
                {
                    assertEquals(ring.predictSeconds(op, n, bytes, cost),
                        hierarchical.predictSeconds(op, n, bytes, cost), 1e-15, op + " n=" + n + " m=" + bytes);
                }
                final Object broadcast = n <= 2 || bytes < 64 * 1024 ? tree : ring;
                assertEquals(((CostedAlgorithm)broadcast).predictSeconds(Operation.BROADCAST, n, bytes, cost),
                    hierarchical.predictSeconds(Operation.BROADCAST, n, bytes, cost), 1e-15, "broadcast n=" + n);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> hierarchical.predictSeconds(Operation.REDUCE, 4, 8, cost));
    }

    /** Each level by its own parameters: the ring within a node, the ring on each rail of m/L bytes across. */
    @Test
    void eachLevelCostsByItsOwnLinks()
    {
        final CostParameters level0 = new CostParameters(1e-6, 1e-10, 1e-10);
        final CostParameters level1 = new CostParameters(1e-5, 1e-9, 1e-10);
        final HierarchicalAlgorithm hierarchical = HierarchicalAlgorithm.overRing();
        final double m = 16e6;
        final int nodes = 2;
        final int perNode = 4;
        final double within = (perNode - 1) * (level0.alpha() + m / perNode * level0.beta());
        final double across = (nodes - 1) * (level1.alpha() + m / (nodes * perNode) * level1.beta());
        assertEquals(within + across,
            hierarchical.predictSeconds(Operation.ALL_GATHER, nodes, perNode, (long)m, level0, level1), 1e-12);
        assertEquals(within + across + (perNode - 1) * m / perNode * level0.gamma() +
            (nodes - 1) * m / (nodes * perNode) * level1.gamma(),
            hierarchical.predictSeconds(Operation.REDUCE_SCATTER, nodes, perNode, (long)m, level0, level1), 1e-12);
        // From 8 MiB the all-reduce's levels are pipelined over 4 pieces: the slower level, plus a quarter of the other.
        final double withinAllReduce = 2 * within + (perNode - 1) * m / perNode * level0.gamma();
        final double acrossAllReduce = 2 * across + (nodes - 1) * m / (nodes * perNode) * level1.gamma();
        assertEquals(Math.max(withinAllReduce, acrossAllReduce) + Math.min(withinAllReduce, acrossAllReduce) / 4,
            hierarchical.predictSeconds(Operation.ALL_REDUCE, nodes, perNode, (long)m, level0, level1), 1e-12);
        final double small = 1e6;
        assertEquals(2 * (perNode - 1) * (level0.alpha() + small / perNode * level0.beta()) +
            (perNode - 1) * small / perNode * level0.gamma() +
            2 * (nodes - 1) * (level1.alpha() + small / (nodes * perNode) * level1.beta()) +
            (nodes - 1) * small / (nodes * perNode) * level1.gamma(),
            hierarchical.predictSeconds(Operation.ALL_REDUCE, nodes, perNode, (long)small, level0, level1), 1e-12,
            "below 8 MiB the levels run one after the other");
        // The flat ring pays the slow links' beta on the same share of m with one rank per step crossing them.
        assertTrue(hierarchical.predictSeconds(Operation.ALL_GATHER, nodes, perNode, (long)m, level0, level1) <
            new RingAlgorithm().predictSeconds(Operation.ALL_GATHER, nodes * perNode, (long)m, level1));
    }

    private static long crossNodeBytes(final int[] nodeOfRank, final Entry entry, final int count) throws Exception
    {
        final int n = nodeOfRank.length;
        final CollectiveCase c = CollectiveCase.of(entry, n, DataType.FP32, ReduceOp.SUM, count, false, 0, 5L, true);
        // One segment per message: the count is of blocks, not of messages.
        try (LocalGroups groups = new LocalGroups(nodeOfRank, 1 << 20, null))
        {
            final List<byte[]> outputs = groups.run(c::run);
            for (int r = 0; r < n; r++)
            {
                assertEquals(null, c.check(r, outputs.get(r)));
            }
            return groups.crossNodeBytes();
        }
    }

    private static int[] allRoots(final int n)
    {
        final int[] roots = new int[n];
        Arrays.setAll(roots, i -> i);
        return roots;
    }

    private static void addCases(
        final List<Supplier<CollectiveCase>> cases, final Entry entry, final int n, final DataType type,
        final ReduceOp[] ops, final int count, final int[] roots)
    {
        final boolean[] placements = entry.hasPlacement() ? new boolean[] {false, true} : new boolean[] {false};
        for (final ReduceOp op : ops)
        {
            for (final boolean inPlace : placements)
            {
                for (final int root : entry.rooted() ? roots : new int[] {0})
                {
                    final long seed = cases.size() * 1_000_003L + count;
                    cases.add(() -> CollectiveCase.of(entry, n, type, op, count, inPlace, root, seed, true));
                }
            }
        }
    }

    private static void check(
        final String name, final int[] nodeOfRank, final int segmentBytes, final Long jitterSeed,
        final List<Supplier<CollectiveCase>> cases) throws Exception
    {
        final List<String> failures = new ArrayList<>();
        final int[] checked = {0};
        AlgorithmMatrixTest.runCases(nodeOfRank, segmentBytes, jitterSeed, cases, (c, outputs) ->
        {
            checked[0]++;
            for (int r = 0; r < outputs.length; r++)
            {
                final String problem = c.check(r, outputs[r]);
                if (problem != null)
                {
                    failures.add("nodes " + name + ": " + problem);
                    return;
                }
            }
        });
        assertTrue(failures.isEmpty(), () -> failures.size() + " of " + checked[0] + " cases failed, the first: " +
            String.join("\n", failures.subList(0, Math.min(5, failures.size()))));
        assertEquals(cases.size(), checked[0], "cases checked");
    }

    /**
     * The ring, after overwriting the whole of scratch slots 0 and 1: what a composed algorithm held there across
     * the call is lost, as it would be with an inner algorithm that uses both.
     */
    private static final class Scribbler
        implements AllReduceAlgorithm, AllGatherAlgorithm, ReduceScatterAlgorithm, BroadcastAlgorithm
    {
        private final RingAlgorithm ring = new RingAlgorithm();

        @Override
        public String name()
        {
            return "scribbler";
        }

        @Override
        public void allReduce(
            final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int count, final DataType type,
            final Reducer reducer)
        {
            scribble(group);
            ring.allReduce(group, send, recv, count, type, reducer);
        }

        @Override
        public void allGather(
            final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int sendCount,
            final DataType type)
        {
            scribble(group);
            ring.allGather(group, send, recv, sendCount, type);
        }

        @Override
        public void reduceScatter(
            final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int recvCount,
            final DataType type, final Reducer reducer)
        {
            scribble(group);
            ring.reduceScatter(group, send, recv, recvCount, type, reducer);
        }

        @Override
        public void broadcast(
            final PeerGroup group, final ByteBuffer buf, final int count, final DataType type, final int root)
        {
            scribble(group);
            ring.broadcast(group, buf, count, type, root);
        }

        private static void scribble(final PeerGroup group)
        {
            for (int slot = 0; slot < 2; slot++)
            {
                final ByteBuffer scratch = group.scratch(slot, 1);
                for (int i = 0; i < scratch.capacity(); i++)
                {
                    scratch.put(i, (byte)0x5A);
                }
            }
        }
    }
}
