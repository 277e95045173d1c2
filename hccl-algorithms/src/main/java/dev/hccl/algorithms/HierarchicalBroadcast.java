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
            if (null != ArenaAlgorithm.spanning(localGroup) || treeWithinNode(local.length, (long)count * type.size()))
            {
                NodeLevel.broadcast(localGroup, buf, count, type, localRoot);
            }
            else
            {
                ScatterRingBroadcast.broadcast(localGroup, buf, count, type, localRoot);
            }
        }
    }

    /**
     * The binomial tree within a node below {@link TuningTable#HIERARCHICAL_TREE_BROADCAST_MAX_BYTES}; every rank
     * decides from the count alone, so a node's ranks agree. At two ranks the tree sends the message once, as the
     * scatter + ring would in two halves.
     */
    static boolean treeWithinNode(final int ranks, final long bytes)
    {
        return ranks <= 2 || bytes < TuningTable.HIERARCHICAL_TREE_BROADCAST_MAX_BYTES;
    }
}
