package dev.hccl.algorithms;

import dev.hccl.api.DataType;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.PeerGroup;

import java.nio.ByteBuffer;

/**
 * The broadcast schedule of {@link HierarchicalAlgorithm}: the root's data goes across nodes to one rank per node,
 * then within each node from that rank. The class description of {@link HierarchicalAlgorithm} walks through it.
 */
final class HierarchicalBroadcast
{
    /**
     * Within a node, below this many bytes the binomial tree ({@code ceil(log2 L)} hops of the whole message), from
     * it on scatter + ring all-gather (each byte about twice): the crossover that the flat choice measured on
     * loopback ({@code AlgorithmSelector.TREE_BROADCAST_MAX_BYTES}, docs/ALGORITHMS.md), since a node's ranks talk
     * over the same kind of local link. Every rank decides from the count alone, so a node's ranks agree.
     */
    static final int TREE_BROADCAST_MAX_BYTES = 64 * 1024;

    private HierarchicalBroadcast()
    {
    }

    static void broadcast(
        final PeerGroup group,
        final ByteBuffer buf,
        final int count,
        final DataType type,
        final int root,
        final BroadcastAlgorithm acrossNodes)
    {
        if (group.size() == 1 || count == 0)
        {
            return;
        }
        final RankLayout layout = group.layout();
        final int[] leaders = layout.leaders(layout.localRank(root));
        final int node = layout.nodeOf(group.rank());
        if (layout.nodeCount() > 1 && leaders[node] == group.rank())
        {
            acrossNodes.broadcast(new SubGroup(group, leaders), buf, count, type, layout.nodeOf(root));
        }
        final int[] local = layout.ranksOn(node);
        if (local.length > 1)
        {
            final PeerGroup localGroup = new SubGroup(group, local);
            final int localRoot = layout.localRank(leaders[node]);
            if (treeWithinNode(local.length, (long)count * type.size()))
            {
                new BinomialTreeAlgorithm().broadcast(localGroup, buf, count, type, localRoot);
            }
            else
            {
                ScatterRingBroadcast.broadcast(localGroup, buf, count, type, localRoot);
            }
        }
    }

    /** At two ranks the tree sends the message once, as the scatter + ring would in two halves. */
    static boolean treeWithinNode(final int ranks, final long bytes)
    {
        return ranks <= 2 || bytes < TREE_BROADCAST_MAX_BYTES;
    }
}
