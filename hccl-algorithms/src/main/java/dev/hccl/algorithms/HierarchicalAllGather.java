package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.PeerGroup;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The all-gather schedule of {@link HierarchicalAlgorithm}, all of it within the output: the blocks are gathered in
 * an order that keeps each step's data contiguous (rail by rail for even nodes, node by node otherwise) and then moved
 * to their ranks' places. The class description of {@link HierarchicalAlgorithm} walks through it.
 */
final class HierarchicalAllGather
{
    /** The spare block of the final reordering, taken after every inner algorithm has returned. */
    private static final int SPARE_SLOT = 0;

    private HierarchicalAllGather()
    {
    }

    static void allGather(
        final PeerGroup group,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int sendCount,
        final DataType type,
        final AllGatherAlgorithm acrossNodes)
    {
        if (LocalCases.allGatherDone(group, send, recv, sendCount, type))
        {
            return;
        }
        final RankLayout layout = group.layout();
        final int nodes = layout.nodeCount();
        if (nodes == 1 || nodes == group.size())
        {
            acrossNodes.allGather(group, send, recv, sendCount, type);
            return;
        }
        final int blockBytes = sendCount * type.size();
        // Position p of recv gathers the block of rank order[p]; this rank's own block goes to its position first, so
        // that in place (send is this rank's block of recv) it is read before anything lands on it.
        final int[] order = layout.even() ? layout.byRail() : layout.byNode();
        final int own = indexOf(order, group.rank());
        Copies.copy(recv, own * blockBytes, send, 0, blockBytes);
        if (layout.even())
        {
            // Rail j occupies positions j N .. j N + N - 1 in node order: its all-gather is an in-place one of its
            // own, this rank's block at its rail rank (its node). The node's ring then passes whole rails around.
            final int localRank = layout.localRank(group.rank());
            final ByteBuffer rail = recv.slice(localRank * nodes * blockBytes, nodes * blockBytes)
                .order(ByteOrder.nativeOrder());
            final ByteBuffer mine = recv.slice(own * blockBytes, blockBytes).order(ByteOrder.nativeOrder());
            acrossNodes.allGather(new SubGroup(group, layout.rail(localRank)), mine, rail, sendCount, type);
            NodeLevel.allGatherInPlace(new SubGroup(group, layout.ranksOn(layout.nodeOf(group.rank()))), recv,
                Partition.blocks(nodes * sendCount, layout.mostPerNode(), type.size(), group.segmentBytes()),
                type.size());
        }
        else
        {
            // Uneven nodes: the flat ring through each node's ranks in turn, crossing between nodes once per node.
            RingAlgorithm.allGatherInPlace(new SubGroup(group, order), recv,
                Partition.blocks(sendCount, group.size(), type.size(), group.segmentBytes()));
        }
        toRankOrder(group, recv, order, blockBytes);
    }

    /**
     * Moves every block to its rank's place: block {@code p} holds rank {@code order[p]}'s data. Follows each cycle
     * of the permutation with one spare block, so every block is copied once (twice for one per cycle), in place.
     */
    static void toRankOrder(final PeerGroup group, final ByteBuffer buf, final int[] order, final int blockBytes)
    {
        final int n = order.length;
        // at[r]: the block that holds rank r's data now.
        final int[] at = new int[n];
        for (int p = 0; p < n; p++)
        {
            at[order[p]] = p;
        }
        final boolean[] placed = new boolean[n];
        for (int start = 0; start < n; start++)
        {
            if (placed[start] || at[start] == start)
            {
                continue;
            }
            // Block start is about to receive rank start's data: keep what it holds until the cycle comes back.
            final ByteBuffer spare = group.scratch(SPARE_SLOT, blockBytes);
            Copies.copy(spare, 0, buf, start * blockBytes, blockBytes);
            int p = start;
            while (at[p] != start)
            {
                Copies.copy(buf, p * blockBytes, buf, at[p] * blockBytes, blockBytes);
                placed[p] = true;
                p = at[p];
            }
            Copies.copy(buf, p * blockBytes, spare, 0, blockBytes);
            placed[p] = true;
        }
    }

    static int indexOf(final int[] ranks, final int rank)
    {
        for (int i = 0; i < ranks.length; i++)
        {
            if (ranks[i] == rank)
            {
                return i;
            }
        }
        throw new IllegalArgumentException("rank " + rank + " is not among the ranks");
    }
}
