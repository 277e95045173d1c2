package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * All-reduce in two levels, as HCCL's level0/level1, Horovod's hierarchical all-reduce and UCC's split rail: the
 * slow links between nodes carry each byte once per node, not once per rank.
 * <p>
 * With {@code L} ranks on every node:
 * <ol>
 * <li><b>Within each node</b>, a ring reduce-scatter cuts the buffer into {@code L} chunks: local rank {@code j}
 * ends with chunk {@code j} reduced over its node.</li>
 * <li><b>Across nodes</b>, the ranks of local rank {@code j} (one per node) all-reduce chunk {@code j} with the
 * inter-node algorithm: {@code L} independent all-reduces of {@code m/L} bytes, each on its own "rail".</li>
 * <li><b>Within each node</b>, a ring all-gather hands every chunk to every local rank.</li>
 * </ol>
 * When nodes hold different numbers of ranks the chunks would not line up across nodes, so each node reduces to its
 * lowest rank (binomial tree), those leaders all-reduce the whole buffer, and each leader broadcasts the result in its
 * node. One node, or one rank per node, is the inter-node algorithm alone.
 * <p>
 * Nodes need not hold consecutive ranks: the groups are built from {@link PeerGroup#node(int)}, each in rank order.
 * Every element is reduced in an order fixed by the ranks (the ring within the node, then the inter-node algorithm's
 * order), then only copied, so every rank ends with the same bits.
 * <p>
 * <b>Cost</b>, {@code N} nodes of {@code L} ranks, {@code m} bytes, intra-node links {@code (alpha0, beta0)},
 * inter-node {@code (alpha1, beta1)}, with a ring across nodes:
 * {@code 2(L-1)(alpha0 + m/L beta0) + 2(N-1)(alpha1 + m/(N L) beta1) + gamma terms}. The inter-node bytes per rank
 * are {@code 2 (N-1)/N m/L}: {@code L} times fewer than a flat ring's over the same slow links.
 * {@link #predictSeconds} knows one link class; the topology-aware cost model gives each level its own.
 */
public final class HierarchicalAllReduceAlgorithm implements AllReduceAlgorithm, CostedAlgorithm
{
    /** The name, for HCCL_ALGO. */
    public static final String NAME = "hierarchical";

    private final AllReduceAlgorithm acrossNodes;

    /**
     * @param acrossNodes the all-reduce between nodes (level1).
     */
    public HierarchicalAllReduceAlgorithm(final AllReduceAlgorithm acrossNodes)
    {
        this.acrossNodes = acrossNodes;
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
        final int bytes = count * type.size();
        if (LocalCases.allReduceDone(group, send, recv, count, bytes))
        {
            return;
        }
        final List<int[]> nodes = nodes(group);
        final int[] mine = nodes.get(group.node(group.rank()));
        if (nodes.size() == 1 || nodes.size() == group.size())
        {
            acrossNodes.allReduce(group, send, recv, count, type, reducer);
            return;
        }
        if (send != recv)
        {
            Copies.copy(recv, 0, send, 0, bytes);
        }
        final PeerGroup local = new SubGroup(group, mine);
        if (sameSize(nodes))
        {
            final int localRank = local.rank();
            final int localSize = mine.length;
            final Partition chunks = new Partition(count, localSize, type.size(), group.segmentBytes());
            RingAlgorithm.reduceScatterInPlace(local, recv, chunks, reducer);
            final int elements = chunks.chunkElements(localRank);
            if (elements > 0)
            {
                final ByteBuffer chunk = recv.slice(chunks.chunkOffset(localRank), elements * type.size())
                    .order(ByteOrder.nativeOrder());
                acrossNodes.allReduce(new SubGroup(group, rail(nodes, localRank)), chunk, chunk, elements, type,
                    reducer);
            }
            RingAlgorithm.allGatherInPlace(local, recv, chunks);
            return;
        }
        final BinomialTreeAlgorithm tree = new BinomialTreeAlgorithm();
        tree.reduce(local, recv, recv, count, type, reducer, 0);
        if (local.rank() == 0)
        {
            acrossNodes.allReduce(new SubGroup(group, rail(nodes, 0)), recv, recv, count, type, reducer);
        }
        tree.broadcast(local, recv, count, type, 0);
    }

    /**
     * {@inheritDoc}
     * <p>
     * All-reduce only; without a topology, as one node of {@code worldSize} ranks: the ring's cost.
     */
    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        if (operation != Operation.ALL_REDUCE)
        {
            throw CostTerms.unsupported(NAME, operation);
        }
        return new RingAlgorithm().predictSeconds(operation, worldSize, bytes, cost);
    }

    /** The ranks of each node, in rank order, by node number. */
    private static List<int[]> nodes(final PeerGroup group)
    {
        final List<List<Integer>> byNode = new ArrayList<>();
        for (int r = 0; r < group.size(); r++)
        {
            final int node = group.node(r);
            while (byNode.size() <= node)
            {
                byNode.add(new ArrayList<>());
            }
            byNode.get(node).add(r);
        }
        final List<int[]> nodes = new ArrayList<>();
        for (final List<Integer> ranks : byNode)
        {
            nodes.add(ranks.stream().mapToInt(Integer::intValue).toArray());
        }
        return nodes;
    }

    private static boolean sameSize(final List<int[]> nodes)
    {
        for (final int[] node : nodes)
        {
            if (node.length != nodes.get(0).length)
            {
                return false;
            }
        }
        return true;
    }

    /** Local rank {@code localRank} of every node, in node order. */
    private static int[] rail(final List<int[]> nodes, final int localRank)
    {
        final int[] rail = new int[nodes.size()];
        for (int i = 0; i < rail.length; i++)
        {
            rail[i] = nodes.get(i)[localRank];
        }
        return rail;
    }
}
