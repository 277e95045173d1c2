package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.LibraryThreads;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The all-reduce schedule of {@link HierarchicalAlgorithm}: ring reduce-scatter within each node, an all-reduce of
 * each chunk along its rail across nodes, ring all-gather within each node; for uneven nodes reduce to each node's
 * lowest rank, all-reduce among those, broadcast within each node. The class description of
 * {@link HierarchicalAlgorithm} walks through it.
 */
final class HierarchicalAllReduce
{
    /** How long a failed pipelined all-reduce waits for its rail thread to give up before it returns. */
    private static final long RAIL_STOP_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** The rail threads of pipelined all-reduces: daemons, created on demand, gone after a minute idle. */
    private static final ExecutorService RAILS =
        Executors.newCachedThreadPool(task -> LibraryThreads.newThread(task, "hccl-rail"));
    /**
     * Each rail thread's own scratch, as {@link PeerGroup} requires of a helper thread; kept while the thread lives (a
     * pooled thread runs one rail at a time, and ends when idle).
     */
    private static final ThreadLocal<ScratchBuffers> RAIL_SCRATCH =
        ThreadLocal.withInitial(() -> new ScratchBuffers(PeerGroup.SCRATCH_SLOTS));

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
        final RankLayout layout = group.layout();
        if (layout.nodeCount() == 1 || layout.nodeCount() == group.size())
        {
            acrossNodes.allReduce(group, send, recv, count, type, reducer);
            return;
        }
        if (send != recv)
        {
            Copies.copy(recv, 0, send, 0, bytes);
        }
        final PeerGroup local = new SubGroup(group, layout.ranksOn(layout.nodeOf(group.rank())));
        if (layout.even() && (long)bytes >= TuningTable.HIERARCHICAL_PIPELINE_MIN_BYTES)
        {
            pipelined(group, layout, recv, count, type, reducer, acrossNodes);
            return;
        }
        if (!throughLeaders(layout.even(), layout.mostPerNode(), bytes))
        {
            final int localRank = layout.localRank(group.rank());
            final Partition chunks = new Partition(count, layout.mostPerNode(), type.size(), group.segmentBytes());
            NodeLevel.reduceScatterInPlace(local, recv, chunks, reducer);
            final int elements = chunks.chunkElements(localRank);
            if (elements > 0)
            {
                final ByteBuffer chunk = recv.slice(chunks.chunkOffset(localRank), elements * type.size())
                    .order(ByteOrder.nativeOrder());
                acrossNodes.allReduce(new SubGroup(group, layout.rail(localRank)), chunk, chunk, elements, type,
                    reducer);
            }
            NodeLevel.allGatherInPlace(local, recv, chunks, type.size());
            return;
        }
        NodeLevel.reduce(local, recv, recv, count, type, reducer, 0);
        if (local.rank() == 0)
        {
            acrossNodes.allReduce(new SubGroup(group, layout.rail(0)), recv, recv, count, type, reducer);
        }
        NodeLevel.broadcast(local, recv, count, type, 0);
    }

    /**
     * Whether a buffer goes through one leader per node (reduce to it, all-reduce among the leaders, broadcast from
     * it) rather than through the rails: always for uneven nodes, whose chunks would not line up across them; for
     * even nodes of more than two ranks, small buffers, where the binomial trees' {@code 2 log2 L} steps within a node
     * cost less than the rings' {@code 2 (L-1)}, and the node sends its whole buffer once either way.
     *
     * @param even    whether every node has the same number of ranks.
     * @param perNode ranks on each node (the most on any node when uneven).
     * @param bytes   the buffer.
     * @return true for the leaders' schedule.
     */
    static boolean throughLeaders(final boolean even, final int perNode, final long bytes)
    {
        return !even || (perNode > 2 && bytes <= TuningTable.HIERARCHICAL_LEADERS_MAX_BYTES);
    }

    /**
     * The even schedule with its levels overlapped: the buffer is cut into
     * {@link TuningTable#HIERARCHICAL_PIPELINE_PIECES} pieces, and while this thread reduces piece {@code p+1} within
     * the node (bound by the CPU and the local links), a rail thread all-reduces piece {@code p}'s chunk across nodes
     * (bound by the network). Then this thread all-gathers each piece
     * within the node as soon as its rail all-reduce is done. Each piece is the unpipelined schedule on its own, so
     * every element is still reduced in an order fixed by the ranks.
     * <p>
     * The two threads talk to disjoint ranks (this node's, and the rail's on other nodes), so their messages never
     * meet; each piece's messages carry their own tag mark, so pieces between the same ranks never meet either. This
     * thread waits for the rail through a {@link Request} it awaits on the group: a transport driven by its callers keeps
     * being driven, for the rail's messages too, while it waits.
     */
    private static void pipelined(
        final PeerGroup group,
        final RankLayout layout,
        final ByteBuffer recv,
        final int count,
        final DataType type,
        final Reducer reducer,
        final AllReduceAlgorithm acrossNodes)
    {
        final int localRank = layout.localRank(group.rank());
        final int[] railRanks = layout.rail(localRank);
        final int[] localRanks = layout.ranksOn(layout.nodeOf(group.rank()));
        final int pieceCount = (count + TuningTable.HIERARCHICAL_PIPELINE_PIECES - 1) /
            TuningTable.HIERARCHICAL_PIPELINE_PIECES;
        final int pieces = (count + pieceCount - 1) / pieceCount;
        // Each piece's messages carry its own tag mark: messages of several pieces between two ranks may be in flight
        // at once, and a transport need not deliver them in order.
        final PeerGroup[] locals = new PeerGroup[pieces];
        final ByteBuffer[] piece = new ByteBuffer[pieces];
        final Partition[] chunks = new Partition[pieces];
        final Request[] crossed = new Request[pieces];
        for (int p = 0; p < pieces; p++)
        {
            final int elements = Math.min(pieceCount, count - p * pieceCount);
            piece[p] = recv.slice(p * pieceCount * type.size(), elements * type.size()).order(ByteOrder.nativeOrder());
            chunks[p] = new Partition(elements, layout.mostPerNode(), type.size(), group.segmentBytes());
            locals[p] = new SubGroup(group, localRanks, p + 1);
            // Named after the next rail rank, so that a failure across nodes reads as one with that rank.
            crossed[p] = new Request(railRanks[(layout.nodeOf(group.rank()) + 1) % railRanks.length], false, p);
        }
        final Semaphore reduced = new Semaphore(0);
        final Future<?> across = RAILS.submit(() ->
        {
            int p = 0;
            final ScratchBuffers scratch = RAIL_SCRATCH.get();
            try
            {
                for (; p < pieces; p++)
                {
                    reduced.acquire();
                    final int elements = chunks[p].chunkElements(localRank);
                    if (elements > 0)
                    {
                        final ByteBuffer chunk = piece[p].slice(chunks[p].chunkOffset(localRank),
                            elements * type.size()).order(ByteOrder.nativeOrder());
                        acrossNodes.allReduce(SubGroup.onOtherThread(group, railRanks, p + 1, scratch), chunk, chunk,
                            elements, type, reducer);
                    }
                    crossed[p].complete();
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                failFrom(crossed, p, ex);
            }
            catch (final Throwable ex)
            {
                failFrom(crossed, p, ex);
            }
        });
        boolean done = false;
        try
        {
            for (int p = 0; p < pieces; p++)
            {
                NodeLevel.reduceScatterInPlace(locals[p], piece[p], chunks[p], reducer);
                reduced.release();
            }
            for (int p = 0; p < pieces; p++)
            {
                group.await(crossed[p]);
                NodeLevel.allGatherInPlace(locals[p], piece[p], chunks[p], type.size());
            }
            done = true;
        }
        finally
        {
            if (!done)
            {
                // Never return while the rail thread may still write into the caller's buffer: stop it waiting for
                // pieces that will not come, and let it see its own operation fail.
                across.cancel(true);
                awaitQuietly(crossed[pieces - 1]);
            }
        }
    }

    private static void failFrom(final Request[] crossed, final int from, final Throwable cause)
    {
        for (int p = from; p < crossed.length; p++)
        {
            crossed[p].fail(cause);
        }
    }

    private static void awaitQuietly(final Request last)
    {
        last.await(System.nanoTime() + RAIL_STOP_WAIT_NANOS);
    }

}
