package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import dev.hccl.api.spi.Reducer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The reduce-scatter schedule of {@link HierarchicalAlgorithm}: the input is copied into a work buffer in an order
 * that keeps each step's data contiguous (rail by rail for even nodes, node by node otherwise), reduced there, and
 * this rank's block handed out. The class description of {@link HierarchicalAlgorithm} walks through it.
 */
final class HierarchicalReduceScatter
{
    /**
     * The work buffer: held across the call into the inter-node algorithm, which may take slots 0 and 1 itself
     * (the ring's and halving-doubling's reduce-scatter copy their input into slot 0), so the slot that
     * {@link PeerGroup#scratch} keeps for composed algorithms.
     */
    private static final int WORK_SLOT = 2;

    private HierarchicalReduceScatter()
    {
    }

    static void reduceScatter(
        final PeerGroup group,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int recvCount,
        final DataType type,
        final Reducer reducer,
        final ReduceScatterAlgorithm acrossNodes)
    {
        if (LocalCases.reduceScatterDone(group, send, recv, recvCount, type))
        {
            return;
        }
        final RankLayout layout = group.layout();
        final int nodes = layout.nodeCount();
        if (nodes == 1 || nodes == group.size())
        {
            acrossNodes.reduceScatter(group, send, recv, recvCount, type, reducer);
            return;
        }
        final int n = group.size();
        final int blockBytes = recvCount * type.size();
        // Block p of the work buffer is rank order[p]'s block of the input. The whole input is read here, before
        // anything is written to recv, so recv may be any part of send (in place: this rank's block).
        final int[] order = layout.even() ? layout.byRail() : layout.byNode();
        final ByteBuffer work = group.scratch(WORK_SLOT, n * blockBytes);
        for (int p = 0; p < n; p++)
        {
            Copies.copy(work, p * blockBytes, send, order[p] * blockBytes, blockBytes);
        }
        if (layout.even())
        {
            // Within the node, local rank j reduces rail j's N blocks (contiguous, in node order) over its node; the
            // rail's own reduce-scatter then hands each of its ranks its block, reduced over every node.
            final int localRank = layout.localRank(group.rank());
            NodeLevel.reduceScatterInPlace(new SubGroup(group, layout.ranksOn(layout.nodeOf(group.rank()))), work,
                Partition.blocks(nodes * recvCount, layout.mostPerNode(), type.size(), group.segmentBytes()), reducer);
            final ByteBuffer rail = work.slice(localRank * nodes * blockBytes, nodes * blockBytes)
                .order(ByteOrder.nativeOrder());
            acrossNodes.reduceScatter(new SubGroup(group, layout.rail(localRank)), rail, recv, recvCount, type,
                reducer);
            return;
        }
        // Uneven nodes: the flat ring through each node's ranks in turn, crossing between nodes once per node.
        final int own = HierarchicalAllGather.indexOf(order, group.rank());
        RingAlgorithm.reduceScatterInPlace(new SubGroup(group, order), work,
            Partition.blocks(recvCount, n, type.size(), group.segmentBytes()), reducer);
        Copies.copy(recv, 0, work, own * blockBytes, blockBytes);
    }
}
