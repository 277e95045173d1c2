package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllToAllVAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static dev.hccl.algorithms.Partition.mod;

/**
 * Pairwise exchange for blocks of different sizes ({@code allToAllV}), the schedule of
 * {@link PairwiseAllToAllAlgorithm}: rank {@code r} first copies its block for itself, then in step {@code s}
 * (1 to n-1) sends its block for {@code r+s} and receives the block from {@code r-s}, so every rank talks to one
 * peer per step. All receives are posted before the first send, so incoming blocks land straight in place; bytes of
 * the output outside the blocks are never written.
 * <p>
 * Unlike the ring's blocks, a pair's block size is known to the two ranks of the pair only (the sender's
 * {@code sendCounts[to]}, the receiver's {@code recvCounts[from]}), so every pair exchanges at least one message,
 * empty when the block is: a pair that disagrees then fails with a length mismatch instead of leaving a message
 * unmatched. Blocks are cut into segments of {@code segmentBytes}.
 * <p>
 * <b>Cost</b> ({@code n} ranks, {@code m} bytes sent by each rank in all, even blocks):
 * {@code (n-1)(alpha + (m/n) beta)}.
 */
public final class PairwiseAllToAllVAlgorithm implements AllToAllVAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it: the same family as {@link PairwiseAllToAllAlgorithm}. */
    public static final String NAME = "pairwise";

    private static final int PHASE_ALL_TO_ALL_V = 42;

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public void allToAllV(
        final PeerGroup group,
        final ByteBuffer send,
        final int[] sendCounts,
        final int[] sendDispls,
        final ByteBuffer recv,
        final int[] recvCounts,
        final int[] recvDispls,
        final DataType type)
    {
        final int n = group.size();
        final int r = group.rank();
        final Blocks outgoing = new Blocks(sendCounts, sendDispls, type.size(), group.segmentBytes());
        final Blocks incoming = new Blocks(recvCounts, recvDispls, type.size(), group.segmentBytes());
        if (incoming.bytes(r) > 0)
        {
            Copies.copy(recv, incoming.offset(r), send, outgoing.offset(r), incoming.bytes(r));
        }
        final List<Request> received = new ArrayList<>();
        for (int step = 1; step < n; step++)
        {
            final int from = mod(r - step, n);
            for (int k = 0, messages = messages(incoming, from); k < messages; k++)
            {
                received.add(group.recv(from, Tags.of(PHASE_ALL_TO_ALL_V, step, k), recv,
                    incoming.segmentOffset(from, k), length(incoming, from, k)));
            }
        }
        final Requests sends = new Requests();
        for (int step = 1; step < n; step++)
        {
            final int to = mod(r + step, n);
            for (int k = 0, messages = messages(outgoing, to); k < messages; k++)
            {
                sends.add(group.send(to, Tags.of(PHASE_ALL_TO_ALL_V, step, k), send, outgoing.segmentOffset(to, k),
                    length(outgoing, to, k)));
            }
        }
        for (final Request request : received)
        {
            group.await(request);
        }
        sends.awaitAll(group);
    }

    /** Messages of a block: its segments, and one empty message for an empty block. */
    private static int messages(final Blocks blocks, final int block)
    {
        return Math.max(1, blocks.segments(block));
    }

    private static int length(final Blocks blocks, final int block, final int segment)
    {
        return blocks.bytes(block) == 0 ? 0 : blocks.segmentBytes(block, segment);
    }

    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        if (operation != Operation.ALL_TO_ALL_V)
        {
            throw new IllegalArgumentException(NAME + " (V) does not implement " + operation.displayName());
        }
        return (worldSize - 1) * (cost.alpha() + (double)bytes / worldSize * cost.beta());
    }
}
