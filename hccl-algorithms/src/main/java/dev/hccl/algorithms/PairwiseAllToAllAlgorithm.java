package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllToAllAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

import static dev.hccl.algorithms.Partition.mod;

/**
 * Pairwise exchange: in step {@code s} (1 to n-1) rank {@code r} sends its block for {@code r+s} and receives the
 * block from {@code r-s}, so every rank talks to one peer per step and every link carries the same load. All
 * receives are posted before the first send, so incoming blocks land straight in place.
 * <p>
 * <b>Cost</b>, for {@code m} bytes (a rank's whole send buffer, {@code n} blocks): {@code n-1} steps of one block
 * each, {@code (n-1) alpha + (n-1)/n m beta}.
 */
public final class PairwiseAllToAllAlgorithm implements AllToAllAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it. */
    public static final String NAME = "pairwise";

    private static final int PHASE_ALL_TO_ALL = 5;

    @Override
    public String name()
    {
        return NAME;
    }

    /**
     * {@inheritDoc}
     * <p>
     * All-to-all only: {@code (n-1) alpha + (n-1)/n m beta}, {@code m} a rank's whole send buffer.
     */
    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        CostTerms.check(worldSize, bytes);
        if (operation != Operation.ALL_TO_ALL)
        {
            throw CostTerms.unsupported(NAME, operation);
        }
        return (worldSize - 1) * cost.alpha() + CostTerms.share(worldSize, bytes) * cost.beta();
    }

    @Override
    public void allToAll(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int countPerRank, final DataType type)
    {
        final int n = group.size();
        final int r = group.rank();
        final int blockBytes = countPerRank * type.size();
        Copies.copy(recv, r * blockBytes, send, r * blockBytes, blockBytes);
        if (n == 1 || blockBytes == 0)
        {
            return;
        }
        final int segmentBytes = group.segmentBytes();
        final int segments = Partition.segmentsOf(blockBytes, segmentBytes);
        final Request[] received = new Request[(n - 1) * segments];
        for (int step = 1; step < n; step++)
        {
            final int from = mod(r - step, n);
            for (int k = 0; k < segments; k++)
            {
                final int offset = k * segmentBytes;
                received[(step - 1) * segments + k] = group.recv(from, Tags.of(PHASE_ALL_TO_ALL, step, k), recv,
                    from * blockBytes + offset, Math.min(segmentBytes, blockBytes - offset));
            }
        }
        final Requests sends = new Requests();
        for (int step = 1; step < n; step++)
        {
            final int to = mod(r + step, n);
            for (int k = 0; k < segments; k++)
            {
                final int offset = k * segmentBytes;
                sends.add(group.send(to, Tags.of(PHASE_ALL_TO_ALL, step, k), send, to * blockBytes + offset,
                    Math.min(segmentBytes, blockBytes - offset)));
            }
        }
        Requests.awaitAll(group, received);
        sends.awaitAll(group);
    }
}
