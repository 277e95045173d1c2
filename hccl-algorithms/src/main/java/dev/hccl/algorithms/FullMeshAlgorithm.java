package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

/**
 * The one-shot exchange (HCCL's {@code fullmesh}): every rank sends its whole input to every other rank at once, then
 * reduces the n inputs itself. One network latency instead of the ring's {@code 2(n-1)}, at the price of sending
 * {@code n-1} times the data, so it wins only tiny messages.
 * <p>
 * Every rank reduces the inputs in rank order, {@code ((in0 op in1) op in2) ...}, so every rank computes the same bits
 * whatever the arrival order. The inputs land in scratch: this rank's own input is still being sent while the others
 * arrive, so nothing is reduced into the output until every transfer is done.
 * <p>
 * <b>Cost</b> of an all-reduce of {@code m} bytes: {@code alpha + (n-1) m beta + (n-1) m gamma} (all transfers are in
 * flight at once, so one latency; each rank sends and receives {@code n-1} copies and reduces {@code n-1} inputs).
 */
public final class FullMeshAlgorithm implements AllReduceAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it. */
    public static final String NAME = "fullmesh";

    private static final int PHASE_FULL_MESH = 7;

    /** Only while its scratch, which holds every rank's input at once in one buffer, fits a {@code ByteBuffer}. */
    @Override
    public boolean canRun(final Operation operation, final int worldSize, final long bytes)
    {
        return (long)worldSize * bytes <= Integer.MAX_VALUE - 8;
    }

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
        final int n = group.size();
        final int r = group.rank();
        final int bytes = count * type.size();
        if (LocalCases.allReduceDone(group, send, recv, count, bytes))
        {
            return;
        }
        final int segmentBytes = group.segmentBytes();
        final int segments = Partition.segmentsOf(bytes, segmentBytes);
        // Block j of the scratch holds rank j's input.
        final ByteBuffer inputs = group.scratch(0, n * bytes);
        final Request[] received = new Request[(n - 1) * segments];
        int next = 0;
        for (int peer = 0; peer < n; peer++)
        {
            if (peer == r)
            {
                continue;
            }
            for (int k = 0; k < segments; k++)
            {
                final int offset = k * segmentBytes;
                received[next++] = group.recv(peer, Tags.of(PHASE_FULL_MESH, 0, k), inputs, peer * bytes + offset,
                    Math.min(segmentBytes, bytes - offset));
            }
        }
        final Requests sends = new Requests();
        for (int step = 1; step < n; step++)
        {
            final int peer = (r + step) % n; // staggered, so that no rank is every rank's first destination
            for (int k = 0; k < segments; k++)
            {
                final int offset = k * segmentBytes;
                sends.add(group.send(peer, Tags.of(PHASE_FULL_MESH, 0, k), send, offset,
                    Math.min(segmentBytes, bytes - offset)));
            }
        }
        Copies.copy(inputs, r * bytes, send, 0, bytes);
        Requests.awaitAll(group, received);
        sends.awaitAll(group); // recv may be send: it is written only once nothing reads it any more
        Copies.copy(recv, 0, inputs, 0, bytes);
        for (int j = 1; j < n; j++)
        {
            reducer.reduce(recv, 0, inputs, j * bytes, count);
        }
    }

    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        if (operation != Operation.ALL_REDUCE)
        {
            throw new IllegalArgumentException(NAME + " does not implement " + operation.displayName());
        }
        if (worldSize == 1)
        {
            return 0;
        }
        final double copies = (worldSize - 1) * (double)bytes;
        return cost.alpha() + copies * cost.beta() + copies * cost.gamma();
    }
}
