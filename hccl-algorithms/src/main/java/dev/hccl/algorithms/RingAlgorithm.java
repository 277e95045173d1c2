package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

import static dev.hccl.algorithms.Partition.mod;

/**
 * The pipelined ring: bandwidth-optimal for large messages.
 * <p>
 * The buffer is cut into {@code n} chunks, one per rank. <b>Reduce-scatter</b>: in step {@code s} (0 to n-2) rank
 * {@code r} sends chunk {@code r-s-1} to its right neighbour and reduces chunk {@code r-s-2} received from its left
 * one into its own copy; the chunk it sends in step {@code s+1} is the one it reduced in step {@code s}, so after
 * n-1 steps rank {@code r} holds chunk {@code r} reduced over all ranks. <b>All-gather</b>: in step {@code s} rank
 * {@code r} sends chunk {@code r-s} and receives chunk {@code r-s-1}, so after n-1 steps every rank holds every chunk.
 * All-reduce is reduce-scatter then all-gather.
 * <p>
 * <b>Pipelining.</b> Each chunk is cut into segments. All receives of a step are posted before its sends, and segment
 * {@code k} of step {@code s} is forwarded as soon as segment {@code k} of step {@code s-1} has arrived, so sending,
 * receiving and reducing overlap across steps instead of waiting for whole chunks.
 * <p>
 * Each chunk is reduced in one fixed order along the ring and then copied, so every rank ends with the same bits.
 * Cost: {@code 2(n-1)} latencies and {@code 2(n-1)/n} of the data sent and received per rank for all-reduce.
 */
public final class RingAlgorithm implements AllReduceAlgorithm, AllGatherAlgorithm, ReduceScatterAlgorithm
{
    /** The name, as HCCL_ALGO spells it. */
    public static final String NAME = "ring";

    private static final int PHASE_REDUCE_SCATTER = 1;
    private static final int PHASE_ALL_GATHER = 2;

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
        if (send != recv)
        {
            Copies.copy(recv, 0, send, 0, bytes);
        }
        if (group.size() == 1 || count == 0)
        {
            return;
        }
        final Partition chunks = new Partition(count, group.size(), type.size(), group.segmentBytes());
        reduceScatterInPlace(group, recv, chunks, reducer);
        allGatherInPlace(group, recv, chunks);
    }

    @Override
    public void allGather(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int sendCount, final DataType type)
    {
        final int blockBytes = sendCount * type.size();
        Copies.copy(recv, group.rank() * blockBytes, send, 0, blockBytes);
        if (group.size() == 1 || sendCount == 0)
        {
            return;
        }
        allGatherInPlace(group, recv, Partition.blocks(sendCount, group.size(), type.size(), group.segmentBytes()));
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
        final int n = group.size();
        final int blockBytes = recvCount * type.size();
        if (n == 1 || recvCount == 0)
        {
            Copies.copy(recv, 0, send, 0, blockBytes);
            return;
        }
        // The send buffer is read-only to us: reduce in a scratch copy, then hand out this rank's block.
        final ByteBuffer work = group.scratch(0, n * blockBytes);
        Copies.copy(work, 0, send, 0, n * blockBytes);
        final Partition blocks = Partition.blocks(recvCount, n, type.size(), group.segmentBytes());
        reduceScatterInPlace(group, work, blocks, reducer);
        Copies.copy(recv, 0, work, group.rank() * blockBytes, blockBytes);
    }

    /**
     * Reduce-scatter within {@code work}: afterwards chunk {@code rank} holds the reduction over all ranks.
     */
    static void reduceScatterInPlace(
        final PeerGroup group, final ByteBuffer work, final Partition chunks, final Reducer reducer)
    {
        final int n = group.size();
        final int r = group.rank();
        final int right = mod(r + 1, n);
        final int left = mod(r - 1, n);
        final Requests sends = new Requests();
        Request[] previous = null;
        for (int step = 0; step < n - 1; step++)
        {
            final int sendChunk = mod(r - step - 1, n);
            final int recvChunk = mod(r - step - 2, n);
            final Request[] received = new Request[chunks.segments(recvChunk)];
            for (int k = 0; k < received.length; k++)
            {
                received[k] = group.recvReduce(left, Tags.of(PHASE_REDUCE_SCATTER, step, k), work,
                    chunks.segmentOffset(recvChunk, k), chunks.segmentBytes(recvChunk, k), reducer);
            }
            for (int k = 0, segments = chunks.segments(sendChunk); k < segments; k++)
            {
                if (previous != null)
                {
                    group.await(previous[k]); // this segment was reduced in the step before: forward it at once
                }
                sends.add(group.send(right, Tags.of(PHASE_REDUCE_SCATTER, step, k), work,
                    chunks.segmentOffset(sendChunk, k), chunks.segmentBytes(sendChunk, k)));
            }
            previous = received;
        }
        Requests.awaitAll(group, previous);
        sends.awaitAll(group);
    }

    /**
     * All-gather within {@code work}: chunk {@code rank} must hold this rank's data; afterwards every chunk does.
     */
    static void allGatherInPlace(final PeerGroup group, final ByteBuffer work, final Partition chunks)
    {
        final int n = group.size();
        final int r = group.rank();
        final int right = mod(r + 1, n);
        final int left = mod(r - 1, n);
        final Requests sends = new Requests();
        Request[] previous = null;
        for (int step = 0; step < n - 1; step++)
        {
            final int sendChunk = mod(r - step, n);
            final int recvChunk = mod(r - step - 1, n);
            final Request[] received = new Request[chunks.segments(recvChunk)];
            for (int k = 0; k < received.length; k++)
            {
                received[k] = group.recv(left, Tags.of(PHASE_ALL_GATHER, step, k), work,
                    chunks.segmentOffset(recvChunk, k), chunks.segmentBytes(recvChunk, k));
            }
            for (int k = 0, segments = chunks.segments(sendChunk); k < segments; k++)
            {
                if (previous != null)
                {
                    group.await(previous[k]);
                }
                sends.add(group.send(right, Tags.of(PHASE_ALL_GATHER, step, k), work,
                    chunks.segmentOffset(sendChunk, k), chunks.segmentBytes(sendChunk, k)));
            }
            previous = received;
        }
        Requests.awaitAll(group, previous);
        sends.awaitAll(group);
    }
}
