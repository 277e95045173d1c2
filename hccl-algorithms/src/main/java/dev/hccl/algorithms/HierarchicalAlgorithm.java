package dev.hccl.algorithms;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.CollectiveAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import dev.hccl.api.spi.Reducer;

import java.nio.ByteBuffer;

/**
 * All-reduce, all-gather, reduce-scatter and broadcast in two levels, as HCCL's level0/level1: the slow links between
 * nodes carry each byte once per node, not once per rank. Level0 runs within each node (the ring, or for broadcast the
 * binomial tree or scatter + ring); level1 runs across nodes, with the algorithms given to the constructor
 * ({@link #overRing()}: the ring for all four).
 * <p>
 * With {@code N} nodes of {@code L} ranks each, local rank {@code j} is a node's {@code j}-th rank in rank order, and
 * <em>rail</em> {@code j} is local rank {@code j} of every node, in node order. {@code m} is the whole buffer.
 * <ul>
 * <li><b>All-reduce.</b> A ring reduce-scatter within each node leaves local rank {@code j} with chunk {@code j} of
 * {@code L}, reduced over its node; rail {@code j} all-reduces that chunk with level1; a ring all-gather within each
 * node hands every chunk to every local rank. Up to 64 KiB, with more than two ranks per node, it goes through the
 * node leaders as for uneven nodes, since a tree's {@code 2 ceil(log2 L)} local steps beat the rings' {@code 2(L-1)}
 * while latency dominates.</li>
 * <li><b>All-gather.</b> Rail {@code j} all-gathers its ranks' blocks with level1; a ring all-gather within each node
 * passes these groups of {@code N} blocks around; a local pass then moves each block to its rank's place. All of it
 * happens in the output, with one spare block for the reordering.</li>
 * <li><b>Reduce-scatter</b>, the mirror image. The input is copied rail by rail into a work buffer; a ring
 * reduce-scatter within each node, then level1's along each rail, leaves each rank its block reduced over every node.
 * The whole input is read before the output is written, so the output may be any part of the input (in place: this
 * rank's block).</li>
 * <li><b>Broadcast.</b> The root broadcasts with level1 to one rank per node (the root's local rank where that node
 * has one, else its lowest rank), which broadcasts within its node as the flat automatic choice does: the binomial
 * tree below 64 KiB or at two ranks per node, else scatter + ring all-gather. Any node sizes work.</li>
 * </ul>
 * <b>Uneven nodes</b> (different {@code L}), where the rails' chunks would not line up: all-reduce reduces to each
 * node's lowest rank (binomial tree), those ranks all-reduce with level1, and each broadcasts the result in its node
 * (binomial tree); all-gather and reduce-scatter run the flat ring through each node's ranks in turn. <b>One node, or
 * one rank per node</b>: all-reduce, all-gather and reduce-scatter are level1 alone over the whole group; broadcast is
 * the within-node part alone, or level1 alone.
 * <p>
 * Nodes need not hold consecutive ranks: the groups come from {@link PeerGroup#node(int)}, each in rank order. Every
 * element is reduced in an order fixed by the ranks (the ring within the node, then level1's), then only copied, so
 * every rank ends with the same bits whatever order messages arrive in. The two levels' groups never share a pair of
 * ranks, so their messages cannot meet.
 * <p>
 * <b>Scratch.</b> All-reduce, all-gather and broadcast work in the caller's buffers; all-gather takes slot 0 for one
 * spare block once its inner algorithms have returned. Reduce-scatter holds its work buffer ({@code m} bytes) across
 * the level1 call, so it takes slot 2, which {@link PeerGroup#scratch} keeps for composed algorithms.
 * <p>
 * <b>Cost</b>, with links {@code (alpha0, beta0)} within a node and {@code (alpha1, beta1)} between nodes, reduction
 * {@code gamma}, {@code m} as {@link CostedAlgorithm} counts it, and rings at both levels:
 * <ul>
 * <li>all-reduce: {@code T0 + T1} with {@code T0 = 2(L-1)(alpha0 + m/L beta0) + (L-1)/L m gamma} and
 * {@code T1 = 2(N-1)(alpha1 + m/(N L) beta1) + (N-1)/(N L) m gamma}; from 8 MiB, where a rail thread runs level1 on
 * one of 4 pieces while the caller reduces the next, {@code max(T0, T1) + min(T0, T1) / 4}; through the leaders, the
 * binomial trees' reduce and broadcast within the node plus level1's all-reduce of {@code m}, alone on its links;</li>
 * <li>all-gather: {@code (N-1)(alpha1 + m/(N L) beta1) + (L-1)(alpha0 + m/L beta0)};</li>
 * <li>reduce-scatter: {@code (L-1)(alpha0 + m/L (beta0 + gamma)) + (N-1)(alpha1 + m/(N L) (beta1 + gamma))};</li>
 * <li>broadcast: {@code (ceil(log2 N) + N - 1) alpha1 + 2(N-1)/N m beta1}, then within the node
 * {@code ceil(log2 L)(alpha0 + m beta0)} (tree) or {@code (ceil(log2 L) + L - 1) alpha0 + 2(L-1)/L m beta0}.</li>
 * </ul>
 * The all-gather's local reordering is not modelled.
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
    public static HierarchicalAlgorithm withLevel1(
        final Operation operation, final CollectiveAlgorithm acrossNodes)
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
    public CollectiveAlgorithm level1(final Operation operation)
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

    /** On one node it would be its level1 alone, which the cost model weighs as itself. */
    @Override
    public boolean weighedOn(final RankLayout layout)
    {
        return layout.nodeCount() > 1;
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
     * Without a topology: one node of {@code worldSize} ranks ({@code N = 1}), so the ring's cost for all-reduce,
     * all-gather and reduce-scatter, and for broadcast the binomial tree's below 64 KiB or at two ranks, else
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
     * Even nodes: the two-level formula, with each node's network link shared by its {@code L} rails (broadcast's
     * level1 has it alone). All-reduce through the leaders: binomial trees within the node around the leaders'
     * all-reduce. Uneven nodes' all-gather and reduce-scatter: the flat ring. One rank per node: level1 alone. One
     * node: the local formula.
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

    private CollectiveAlgorithm acrossFor(final Operation operation)
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
     * The predicted time of one operation over {@code nodes} nodes of {@code perNode} ranks each, by the class
     * description's formulas. Across nodes it uses the level1 algorithm's prediction if it is a
     * {@link CostedAlgorithm}, else the ring's, for {@code ceil(bytes / perNode)} bytes per rail (the whole buffer
     * for broadcast). All-reduce is priced as the rails' schedule at every size;
     * {@link #predictSeconds(Operation, RankLayout, long, LinkCosts)} knows when the leaders' runs instead.
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
                if (bytes < TuningTable.HIERARCHICAL_PIPELINE_MIN_BYTES || nodes == 1 || perNode == 1)
                {
                    return within + between;
                }
                // Pipelined: the slower level's time, plus the faster level's share of the piece that cannot overlap.
                return Math.max(within, between) + Math.min(within, between) / TuningTable.HIERARCHICAL_PIPELINE_PIECES;
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
        final CollectiveAlgorithm algorithm, final Operation operation, final int nodes, final long bytes,
        final CostParameters cost)
    {
        final CostedAlgorithm costed = algorithm instanceof CostedAlgorithm ? (CostedAlgorithm)algorithm : RING;
        return costed.predictSeconds(operation, nodes, bytes, cost);
    }
}
