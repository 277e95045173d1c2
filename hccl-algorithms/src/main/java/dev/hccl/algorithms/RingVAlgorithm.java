package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllGatherVAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceScatterVAlgorithm;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

import static dev.hccl.algorithms.Partition.mod;

/**
 * The ring for blocks of different sizes: {@code allGatherV} and {@code reduceScatterV}, with the schedule of
 * {@link RingAlgorithm} over blocks whose sizes the caller gives (empty blocks included) instead of equal chunks.
 * <p>
 * <b>All-gather-V</b>: rank {@code r} first copies its own block into place. In step {@code s} (0 to n-2) it sends
 * block {@code r-s} to its right neighbour and receives block {@code r-s-1} from its left one, straight into that
 * block's place in the output; the block it sends in step {@code s+1} is the one it received in step {@code s}.
 * After n-1 steps every rank holds every block. Bytes outside the blocks are never written.
 * <p>
 * <b>Reduce-scatter-V</b>: the blocks are first packed one after another into scratch (the input is not ours to
 * change, and its blocks may sit anywhere). In step {@code s} rank {@code r} sends block {@code r-s-1} to the right
 * and reduces block {@code r-s-2} received from the left into its own copy ({@code own = own op received}); the block
 * it sends in step {@code s+1} is the one it reduced in step {@code s}. After n-1 steps rank {@code r} holds block
 * {@code r} reduced over all ranks and copies it out. Block {@code b} is always reduced in the same order, starting
 * at rank {@code b+1} and going round the ring to rank {@code b}, one reduction per rank, whatever order messages
 * arrive in; so the result is the same bits on every run.
 * <p>
 * <b>Pipelining.</b> Every receive is posted before the first send, so data lands in place however far a neighbour
 * runs ahead; segment {@code k} of step {@code s} goes on as soon as segment {@code k} of step {@code s-1} has
 * arrived. An empty block costs no message: every rank knows its size.
 * <p>
 * <b>Cost</b> ({@code n} ranks, {@code m} bytes in all, blocks of {@code m/n}): all-gather-V
 * {@code (n-1)(alpha + (m/n) beta)}, reduce-scatter-V {@code (n-1)(alpha + (m/n)(beta + gamma))}. With uneven blocks
 * each step lasts as long as its largest block, so the {@code m/n} term becomes the largest block in the worst case.
 */
public final class RingVAlgorithm implements AllGatherVAlgorithm, ReduceScatterVAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it: the same family as {@link RingAlgorithm}. */
    public static final String NAME = "ring";

    private static final int PHASE_ALL_GATHER_V = 40;
    private static final int PHASE_REDUCE_SCATTER_V = 41;
    /** All-gather step s sends block rank-s and receives block rank-s-1. */
    private static final int ALL_GATHER_SEND_SHIFT = 0;
    private static final int ALL_GATHER_RECV_SHIFT = 1;
    /** Reduce-scatter step s sends block rank-s-1 and reduces block rank-s-2 received from the left. */
    private static final int REDUCE_SCATTER_SEND_SHIFT = 1;
    private static final int REDUCE_SCATTER_RECV_SHIFT = 2;

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public void allGatherV(
        final PeerGroup group,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int[] recvCounts,
        final int[] recvDispls,
        final DataType type)
    {
        final Blocks blocks = new Blocks(recvCounts, recvDispls, type.size(), group.segmentBytes());
        final int own = group.rank();
        if (blocks.bytes(own) > 0)
        {
            Copies.copy(recv, blocks.offset(own), send, 0, blocks.bytes(own));
        }
        if (group.size() > 1)
        {
            ring(group, recv, blocks, PHASE_ALL_GATHER_V, ALL_GATHER_SEND_SHIFT, ALL_GATHER_RECV_SHIFT, null);
        }
    }

    @Override
    public void reduceScatterV(
        final PeerGroup group,
        final ByteBuffer send,
        final int[] sendCounts,
        final int[] sendDispls,
        final ByteBuffer recv,
        final DataType type,
        final Reducer reducer)
    {
        final int own = group.rank();
        final Blocks input = new Blocks(sendCounts, sendDispls, type.size(), group.segmentBytes());
        if (group.size() == 1)
        {
            if (input.bytes(own) > 0)
            {
                Copies.copy(recv, 0, send, input.offset(own), input.bytes(own));
            }
            return;
        }
        final Blocks packed = Blocks.packed(sendCounts, type.size(), group.segmentBytes());
        final ByteBuffer work = group.scratch(0, packed.totalBytes());
        for (int b = 0; b < sendCounts.length; b++)
        {
            if (packed.bytes(b) > 0)
            {
                Copies.copy(work, packed.offset(b), send, input.offset(b), packed.bytes(b));
            }
        }
        ring(group, work, packed, PHASE_REDUCE_SCATTER_V, REDUCE_SCATTER_SEND_SHIFT, REDUCE_SCATTER_RECV_SHIFT,
            reducer);
        if (packed.bytes(own) > 0)
        {
            Copies.copy(recv, 0, work, packed.offset(own), packed.bytes(own));
        }
    }

    /**
     * One ring phase over {@code work}: in step {@code s}, block {@code rank - s - recvShift} from the left (reduced
     * into {@code work}, or copied when {@code reducer} is null) and block {@code rank - s - sendShift} to the right,
     * each segment as soon as the previous step brought it.
     */
    private static void ring(
        final PeerGroup group,
        final ByteBuffer work,
        final Blocks blocks,
        final int phase,
        final int sendShift,
        final int recvShift,
        final Reducer reducer)
    {
        final int n = group.size();
        final int rank = group.rank();
        final int left = mod(rank - 1, n);
        final int right = mod(rank + 1, n);
        final Request[][] received = new Request[n - 1][];
        for (int step = 0; step < n - 1; step++)
        {
            final int block = mod(rank - step - recvShift, n);
            received[step] = new Request[blocks.segments(block)];
            for (int k = 0; k < received[step].length; k++)
            {
                received[step][k] = group.recvReduce(left, Tags.of(phase, step, k), work,
                    blocks.segmentOffset(block, k), blocks.segmentBytes(block, k), reducer);
            }
        }
        final Requests sends = new Requests();
        for (int step = 0; step < n - 1; step++)
        {
            // The block sent in step s > 0 is the one received in step s - 1: same block, same segments.
            final int block = mod(rank - step - sendShift, n);
            for (int k = 0, segments = blocks.segments(block); k < segments; k++)
            {
                if (step > 0)
                {
                    group.await(received[step - 1][k]);
                }
                sends.add(group.send(right, Tags.of(phase, step, k), work, blocks.segmentOffset(block, k),
                    blocks.segmentBytes(block, k)));
            }
        }
        Requests.awaitAll(group, received[n - 2]);
        sends.awaitAll(group);
    }

    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        final double perStep = (double)bytes / worldSize;
        switch (operation)
        {
            case ALL_GATHER_V:
                return (worldSize - 1) * (cost.alpha() + perStep * cost.beta());
            case REDUCE_SCATTER_V:
                return (worldSize - 1) * (cost.alpha() + perStep * (cost.beta() + cost.gamma()));
            default:
                throw new IllegalArgumentException(NAME + " (V) does not implement " + operation.displayName());
        }
    }
}
