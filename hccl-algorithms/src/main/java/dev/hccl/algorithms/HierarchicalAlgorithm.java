package dev.hccl.algorithms;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import dev.hccl.api.spi.Reducer;

import java.nio.ByteBuffer;

/**
 * All-reduce, all-gather, reduce-scatter and broadcast in two levels, as HCCL's level0/level1, Horovod's hierarchical
 * all-reduce and UCC's split rail: the slow links between nodes carry each byte once per node, not once per rank.
 * Level0 runs within each node (the ring, or for broadcast the binomial tree or scatter + ring); level1 runs across
 * nodes, with the algorithms given to the constructor ({@link #overRing()}: the ring for all four).
 * <p>
 * With {@code N} nodes of {@code L} ranks each, local rank {@code j} of a node is its {@code j}-th rank in rank
 * order, and <em>rail</em> {@code j} is local rank {@code j} of every node, in node order. {@code b} is a rank's block
 * of all-gather or reduce-scatter, {@code m} the whole buffer.
 * <ul>
 * <li><b>All-reduce.</b> A ring reduce-scatter within each node cuts the buffer into {@code L} chunks: local rank
 * {@code j} ends with chunk {@code j} reduced over its node. Rail {@code j} then all-reduces chunk {@code j} with
 * level1: {@code L} independent all-reduces of {@code m/L} bytes. A ring all-gather within each node hands every chunk
 * to every local rank. Up to 64 KiB, with more than two ranks per node, the buffer goes through one leader per node
 * instead, as for uneven nodes below: a binomial tree's {@code 2 ceil(log2 L)} steps within the node cost less than
 * the rings' {@code 2(L-1)} while latency dominates, and the node sends its whole buffer once either way.</li>
 * <li><b>All-gather.</b> Rail {@code j} all-gathers its ranks' own blocks with level1, so local rank {@code j} holds
 * the {@code N} blocks of its rail; a ring all-gather within each node passes those groups of {@code N} blocks around,
 * so every rank holds all {@code n}; a local reordering then moves each block to its rank's place. Everything happens
 * in the output: the output is gathered rail by rail, where each rail's blocks are contiguous, and reordered by
 * following the cycles of the permutation with one spare block (one local pass over {@code m}). The links between
 * nodes carry each block once per remote node, the least an all-gather can.</li>
 * <li><b>Reduce-scatter</b>, the mirror image. The input is copied rail by rail into a work buffer; a ring
 * reduce-scatter within each node leaves local rank {@code j} with its node's sum of the {@code N} blocks of rail
 * {@code j}'s ranks; rail {@code j} then reduce-scatters those {@code N} blocks with level1, which hands each rank its
 * own block reduced over every node. The whole input is read before the output is written, so the output may be any
 * part of the input (in place: this rank's block).</li>
 * <li><b>Broadcast.</b> The root broadcasts with level1 to one rank per node: the rank with the root's local rank
 * where that node has one, else the node's lowest rank; each of those then broadcasts within its node, with the
 * binomial tree below 64 KiB or at two ranks per node (few latencies) and scatter + ring all-gather from 64 KiB (each
 * byte crosses a local link about twice instead of {@code ceil(log2 L)} times), as the flat automatic choice does.
 * This works for any node sizes.</li>
 * </ul>
 * <b>Uneven nodes</b> (different {@code L}): the chunks of the rails would not line up. All-reduce reduces within each
 * node to its lowest rank (binomial tree), those ranks all-reduce the whole buffer with level1, and each broadcasts the
 * result in its node (binomial tree). All-gather and reduce-scatter run the flat ring through each node's ranks in
 * turn (in the output, or the work buffer, reordered like the rails'), which crosses between nodes once per node.
 * <b>One node, or one rank per node</b>: all-reduce, all-gather and reduce-scatter are level1 alone, over the whole
 * group; broadcast is then the within-node part alone, or level1 alone.
 * <p>
 * Nodes need not hold consecutive ranks: the groups are built from {@link PeerGroup#node(int)}, each in rank order.
 * Every element is reduced in an order fixed by the ranks (the ring within the node, then level1's order), then only
 * copied, so every rank ends with the same bits whatever order messages arrive in. The levels' groups never share a
 * pair of ranks (one holds ranks of one node, the other ranks of different nodes), so their messages cannot meet.
 * <p>
 * <b>Scratch.</b> All-reduce, all-gather and broadcast work in the caller's buffers; all-gather takes slot 0 for one
 * spare block once its inner algorithms have returned. Reduce-scatter holds its work buffer ({@code m} bytes) across
 * the level1 call, so it takes slot 2, which {@link PeerGroup#scratch} keeps for composed algorithms.
 * <p>
 * <b>Cost</b>, {@code N} nodes of {@code L} ranks, {@code m} bytes as {@link CostedAlgorithm} counts them, links
 * within a node {@code (alpha0, beta0)}, between nodes {@code (alpha1, beta1)}, reduction {@code gamma}, with rings at
 * both levels (each level's own formula, {@code m/L} bytes per rail across nodes):
 * <ul>
 * <li>all-reduce: {@code T0 + T1} with {@code T0 = 2(L-1)(alpha0 + m/L beta0) + (L-1)/L m gamma} within the node
 * and {@code T1 = 2(N-1)(alpha1 + m/(N L) beta1) + (N-1)/(N L) m gamma} between nodes; from 8 MiB, where the levels
 * are pipelined over 4 pieces (a rail thread all-reduces one piece across nodes while the caller reduces the next
 * within the node), {@code max(T0, T1) + min(T0, T1) / 4}; through the leaders (small buffers, uneven nodes) the
 * binomial trees' reduce and broadcast within the node plus level1's all-reduce of {@code m} among the leaders,
 * alone on their links;</li>
 * <li>all-gather: {@code (N-1)(alpha1 + m/(N L) beta1) + (L-1)(alpha0 + m/L beta0)};</li>
 * <li>reduce-scatter: {@code (L-1)(alpha0 + m/L (beta0 + gamma)) + (N-1)(alpha1 + m/(N L) (beta1 + gamma))};</li>
 * <li>broadcast: {@code (ceil(log2 N) + N - 1) alpha1 + 2(N-1)/N m beta1}, then within the node
 * {@code ceil(log2 L)(alpha0 + m beta0)} (tree) or {@code (ceil(log2 L) + L - 1) alpha0 + 2(L-1)/L m beta0}.</li>
 * </ul>
 * A rank sends {@code (N-1)/N m/L} bytes between nodes for all-gather and reduce-scatter, twice that for all-reduce:
 * {@code L} times fewer than a flat ring puts on its busiest link between nodes. The all-gather's local reordering
 * (one copy of {@code m}) is not modelled. {@link #predictSeconds} knows one link class and treats the ranks as one
 * node; {@link #predictSeconds(Operation, int, int, long, CostParameters, CostParameters)} gives each level its own.
 */
public final class HierarchicalAlgorithm implements
    AllReduceAlgorithm, AllGatherAlgorithm, ReduceScatterAlgorithm, BroadcastAlgorithm, CostedAlgorithm
{
    /** The name, for HCCL_ALGO. */
    public static final String NAME = "hierarchical";

    /** The within-node algorithm and the formulas' default: it holds no state. */
    private static final RingAlgorithm RING = new RingAlgorithm();
    private static final BinomialTreeAlgorithm TREE = new BinomialTreeAlgorithm();

    private final AllReduceAlgorithm allReduceAcross;
    private final AllGatherAlgorithm allGatherAcross;
    private final ReduceScatterAlgorithm reduceScatterAcross;
    private final BroadcastAlgorithm broadcastAcross;

    /**
     * The two-level algorithms with the given algorithms between nodes (level1).
     *
     * @param allReduceAcross     the all-reduce of each rail's chunk, or of the node leaders' buffers.
     * @param allGatherAcross     the all-gather of each rail's blocks.
     * @param reduceScatterAcross the reduce-scatter of each rail's blocks.
     * @param broadcastAcross     the broadcast from the root to one rank per node.
     */
    public HierarchicalAlgorithm(
        final AllReduceAlgorithm allReduceAcross,
        final AllGatherAlgorithm allGatherAcross,
        final ReduceScatterAlgorithm reduceScatterAcross,
        final BroadcastAlgorithm broadcastAcross)
    {
        this.allReduceAcross = allReduceAcross;
        this.allGatherAcross = allGatherAcross;
        this.reduceScatterAcross = reduceScatterAcross;
        this.broadcastAcross = broadcastAcross;
    }

    /**
     * The two-level algorithms with one operation's algorithm between nodes given, and the ring for the others: what
     * {@code HCCL_ALGO=level0:NA;level1:NAME} asks for across nodes.
     *
     * @param operation all-reduce, all-gather, reduce-scatter or broadcast.
     * @param acrossNodes an algorithm implementing that operation.
     * @return a new instance.
     * @throws IllegalArgumentException for another operation, or an algorithm that does not implement it.
     */
    public static HierarchicalAlgorithm withLevel1(final Operation operation, final Object acrossNodes)
    {
        final RingAlgorithm ring = new RingAlgorithm();
        try
        {
            return switch (operation)
            {
                case ALL_REDUCE -> new HierarchicalAlgorithm((AllReduceAlgorithm)acrossNodes, ring, ring, ring);
                case ALL_GATHER -> new HierarchicalAlgorithm(ring, (AllGatherAlgorithm)acrossNodes, ring, ring);
                case REDUCE_SCATTER -> new HierarchicalAlgorithm(ring, ring, (ReduceScatterAlgorithm)acrossNodes, ring);
                case BROADCAST -> new HierarchicalAlgorithm(ring, ring, ring, (BroadcastAlgorithm)acrossNodes);
                default -> throw CostTerms.unsupported(NAME, operation);
            };
        }
        catch (final ClassCastException ex)
        {
            throw new IllegalArgumentException(acrossNodes + " does not implement " + operation.displayName(), ex);
        }
    }

    /**
     * The algorithm this instance runs between nodes for an operation.
     *
     * @param operation all-reduce, all-gather, reduce-scatter or broadcast.
     * @return the level1 algorithm.
     * @throws IllegalArgumentException for another operation.
     */
    public Object level1(final Operation operation)
    {
        return acrossFor(operation);
    }

    /**
     * The two-level algorithms with the ring between nodes for every operation (scatter + ring for broadcast): the
     * bandwidth-optimal choice for the large messages that a hierarchy pays for.
     *
     * @return a new instance.
     */
    public static HierarchicalAlgorithm overRing()
    {
        final RingAlgorithm ring = new RingAlgorithm();
        return new HierarchicalAlgorithm(ring, ring, ring, ring);
    }

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public void allReduce(
        final PeerGroup group,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int count,
        final DataType type,
        final Reducer reducer)
    {
        HierarchicalAllReduce.allReduce(group, send, recv, count, type, reducer, allReduceAcross);
    }

    @Override
    public void allGather(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int sendCount, final DataType type)
    {
        HierarchicalAllGather.allGather(group, send, recv, sendCount, type, allGatherAcross);
    }

    @Override
    public void reduceScatter(
        final PeerGroup group,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int recvCount,
        final DataType type,
        final Reducer reducer)
    {
        HierarchicalReduceScatter.reduceScatter(group, send, recv, recvCount, type, reducer, reduceScatterAcross);
    }

    @Override
    public void broadcast(
        final PeerGroup group, final ByteBuffer buf, final int count, final DataType type, final int root)
    {
        HierarchicalBroadcast.broadcast(group, buf, count, type, root, broadcastAcross);
    }

    /**
     * {@inheritDoc}
     * <p>
     * All-reduce, all-gather, reduce-scatter and broadcast; without a topology, as one node of {@code worldSize}
     * ranks, by the formulas of the class description with {@code N = 1}: the ring's cost for the first three (what
     * {@link #overRing()} runs on one node), and for broadcast the binomial tree's below 64 KiB or at two ranks, else
     * scatter + ring's.
     */
    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        return predictSeconds(operation, 1, worldSize, bytes, cost, cost);
    }

    /**
     * {@inheritDoc}
     * <p>
     * With even nodes, the two-level formula: the local links within a node; between nodes, the network link of each
     * node shared by its {@code L} rails, which cross at once (broadcast's level1 has one rank per node, alone on
     * it). An all-reduce through the leaders (uneven nodes, or small buffers on nodes of more than two ranks) reduces
     * to and broadcasts from one rank per node (binomial trees) around the leaders' all-reduce, alone on their links;
     * uneven nodes' all-gather and reduce-scatter are the flat ring through each node's ranks in turn. One rank per
     * node is level1 alone; one node, the local formula.
     */
    @Override
    public double predictSeconds(
        final Operation operation, final RankLayout layout, final long bytes, final LinkCosts links)
    {
        final int nodes = layout.nodeCount();
        if (nodes == 1)
        {
            return predictSeconds(operation, layout.worldSize(), bytes, links.local());
        }
        if (layout.mostPerNode() == 1)
        {
            return across(acrossFor(operation), operation, nodes, bytes, links.network());
        }
        if (operation == Operation.ALL_REDUCE &&
            HierarchicalAllReduce.throughLeaders(layout.even(), layout.mostPerNode(), bytes))
        {
            final int most = layout.mostPerNode();
            return TREE.predictSeconds(Operation.REDUCE, most, bytes, links.local()) +
                across(allReduceAcross, operation, nodes, bytes, links.network()) +
                TREE.predictSeconds(Operation.BROADCAST, most, bytes, links.local());
        }
        if (!layout.even() && operation != Operation.BROADCAST)
        {
            CostTerms.check(layout.worldSize(), bytes);
            return RING.predictSeconds(operation, layout.worldSize(), bytes, links.network());
        }
        final CostParameters network = operation == Operation.BROADCAST ? links.network() :
            links.network().sharedBy(layout.mostPerNode());
        return predictSeconds(operation, nodes, layout.mostPerNode(), bytes, links.local(), network);
    }

    private Object acrossFor(final Operation operation)
    {
        return switch (operation)
        {
            case ALL_REDUCE -> allReduceAcross;
            case ALL_GATHER -> allGatherAcross;
            case REDUCE_SCATTER -> reduceScatterAcross;
            case BROADCAST -> broadcastAcross;
            default -> throw CostTerms.unsupported(NAME, operation);
        };
    }

    /**
     * The predicted time of one operation over {@code nodes} nodes of {@code perNode} ranks each, by the formulas of
     * the class description: the ring within each node (for broadcast the tree or scatter + ring, by size), and
     * across nodes the level1 algorithm's own prediction where it is a {@link CostedAlgorithm}, else the ring's, for
     * {@code ceil(bytes / perNode)} bytes per rail (the whole buffer for broadcast). All-reduce is priced as the
     * rails' schedule at every size; {@link #predictSeconds(Operation, RankLayout, long, LinkCosts)} knows when the
     * leaders' runs instead.
     *
     * @param operation all-reduce, all-gather, reduce-scatter or broadcast.
     * @param nodes     the number of nodes, at least 1.
     * @param perNode   ranks on each node, at least 1.
     * @param bytes     the size as {@link CostedAlgorithm#predictSeconds} counts it.
     * @param level0    the links within a node.
     * @param level1    the links between nodes.
     * @return seconds.
     * @throws IllegalArgumentException for another operation, or counts out of range.
     */
    public double predictSeconds(
        final Operation operation,
        final int nodes,
        final int perNode,
        final long bytes,
        final CostParameters level0,
        final CostParameters level1)
    {
        CostTerms.check(nodes, bytes);
        CostTerms.check(perNode, bytes);
        final RingAlgorithm ring = RING;
        final long perRail = (bytes + perNode - 1) / perNode;
        switch (operation)
        {
            case ALL_REDUCE:
            {
                final double within = ring.predictSeconds(operation, perNode, bytes, level0);
                final double between = across(allReduceAcross, operation, nodes, perRail, level1);
                if (bytes < HierarchicalAllReduce.PIPELINE_MIN_BYTES || nodes == 1 || perNode == 1)
                {
                    return within + between;
                }
                // Pipelined: the slower level's time, plus the faster level's share of the piece that cannot overlap.
                return Math.max(within, between) + Math.min(within, between) / HierarchicalAllReduce.PIPELINE_PIECES;
            }
            case ALL_GATHER:
                return ring.predictSeconds(operation, perNode, bytes, level0) +
                    across(allGatherAcross, operation, nodes, perRail, level1);
            case REDUCE_SCATTER:
                return ring.predictSeconds(operation, perNode, bytes, level0) +
                    across(reduceScatterAcross, operation, nodes, perRail, level1);
            case BROADCAST:
            {
                final double within = HierarchicalBroadcast.treeWithinNode(perNode, bytes) ?
                    TREE.predictSeconds(operation, perNode, bytes, level0) :
                    ring.predictSeconds(operation, perNode, bytes, level0);
                return across(broadcastAcross, operation, nodes, bytes, level1) + within;
            }
            default:
                throw CostTerms.unsupported(NAME, operation);
        }
    }

    private static double across(
        final Object algorithm, final Operation operation, final int nodes, final long bytes, final CostParameters cost)
    {
        final CostedAlgorithm costed = algorithm instanceof CostedAlgorithm ? (CostedAlgorithm)algorithm : RING;
        return costed.predictSeconds(operation, nodes, bytes, cost);
    }
}
