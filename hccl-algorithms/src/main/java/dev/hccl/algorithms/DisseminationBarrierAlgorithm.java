package dev.hccl.algorithms;

import dev.hccl.api.Operation;
import dev.hccl.api.spi.BarrierAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

/**
 * The dissemination barrier (Hensgen, Finkel and Manber): in round {@code i} rank {@code r} signals
 * {@code r + 2^i} and waits for {@code r - 2^i}. After {@code ceil(log2 n)} rounds every rank has heard, directly or
 * through others, from every rank, for any n (not only powers of two).
 * <p>
 * <b>Cost</b>: {@code ceil(log2 n) alpha}; the messages are empty, so it does not depend on any size.
 */
public final class DisseminationBarrierAlgorithm implements BarrierAlgorithm, CostedAlgorithm
{
    /** The name. */
    public static final String NAME = "dissemination";

    private static final int PHASE_BARRIER = 6;
    private static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);

    @Override
    public String name()
    {
        return NAME;
    }

    /**
     * {@inheritDoc}
     * <p>
     * Barrier only: {@code ceil(log2 n) alpha}, whatever {@code bytes} says (a barrier moves none).
     */
    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        CostTerms.check(worldSize, bytes);
        if (operation != Operation.BARRIER)
        {
            throw CostTerms.unsupported(NAME, operation);
        }
        return CostTerms.ceilLog2(worldSize) * cost.alpha();
    }

    @Override
    public void barrier(final PeerGroup group)
    {
        final int n = group.size();
        final int r = group.rank();
        for (int round = 0, distance = 1; distance < n; round++, distance <<= 1)
        {
            final Request received = group.recv(Partition.mod(r - distance, n), Tags.of(PHASE_BARRIER, round, 0),
                EMPTY, 0, 0);
            final Request sent = group.send(Partition.mod(r + distance, n), Tags.of(PHASE_BARRIER, round, 0),
                EMPTY, 0, 0);
            group.await(received);
            group.await(sent);
        }
    }
}
