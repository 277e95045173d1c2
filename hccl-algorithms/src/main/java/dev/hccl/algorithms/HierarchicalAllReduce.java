package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The all-reduce schedule of {@link HierarchicalAlgorithm}: ring reduce-scatter within each node, an all-reduce of
 * each chunk along its rail across nodes, ring all-gather within each node; for uneven nodes reduce to each node's
 * lowest rank, all-reduce among those, broadcast within each node. The class description of
 * {@link HierarchicalAlgorithm} walks through it.
 */
final class HierarchicalAllReduce
{
    private HierarchicalAllReduce()
    {
    }

    static void allReduce(
        final PeerGroup group,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int count,
        final DataType type,
        final Reducer reducer,
        final AllReduceAlgorithm acrossNodes)
    {
        final int bytes = count * type.size();
        if (LocalCases.allReduceDone(group, send, recv, count, bytes))
        {
            return;
        }
        final NodeLayout layout = NodeLayout.of(group);
        if (layout.nodes() == 1 || layout.nodes() == group.size())
        {
            acrossNodes.allReduce(group, send, recv, count, type, reducer);
            return;
        }
        if (send != recv)
        {
            Copies.copy(recv, 0, send, 0, bytes);
        }
        final PeerGroup local = new SubGroup(group, layout.ranksOf(layout.node()));
        if (layout.even())
        {
            final int localRank = layout.localRank();
            final Partition chunks = new Partition(count, layout.perNode(), type.size(), group.segmentBytes());
            RingAlgorithm.reduceScatterInPlace(local, recv, chunks, reducer);
            final int elements = chunks.chunkElements(localRank);
            if (elements > 0)
            {
                final ByteBuffer chunk = recv.slice(chunks.chunkOffset(localRank), elements * type.size())
                    .order(ByteOrder.nativeOrder());
                acrossNodes.allReduce(new SubGroup(group, layout.rail(localRank)), chunk, chunk, elements, type,
                    reducer);
            }
            RingAlgorithm.allGatherInPlace(local, recv, chunks);
            return;
        }
        final BinomialTreeAlgorithm tree = new BinomialTreeAlgorithm();
        tree.reduce(local, recv, recv, count, type, reducer, 0);
        if (local.rank() == 0)
        {
            acrossNodes.allReduce(new SubGroup(group, layout.rail(0)), recv, recv, count, type, reducer);
        }
        tree.broadcast(local, recv, count, type, 0);
    }
}
