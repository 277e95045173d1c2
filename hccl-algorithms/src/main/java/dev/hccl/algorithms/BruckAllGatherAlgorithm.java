package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

import static dev.hccl.algorithms.Partition.mod;

/**
 * Bruck's all-gather (Bruck, Ho, Kipnis, Upfal and Weathersby, 1997; HCCL's {@code NB}, "nonuniform Bruck"):
 * {@code ceil(log2 n)} steps for any {@code n}, not only powers of two, so it wins all-gathers of small blocks where
 * the ring's {@code n-1} latencies dominate.
 * <p>
 * Rank {@code r} works in a scratch buffer of {@code n} blocks <em>rotated by r</em>: scratch block {@code i} is
 * destined for rank {@code (r + i) mod n}'s place in the output.
 * <ol>
 *     <li>Scratch block 0 is this rank's own block.</li>
 *     <li>In step {@code k} (distance {@code d = 2^k}, while {@code d < n}) rank {@code r} already holds scratch
 *     blocks {@code 0 .. d-1}. It sends the first {@code c = min(d, n - d)} of them to rank {@code r - d} and
 *     receives {@code c} blocks from rank {@code r + d} into scratch blocks {@code d .. d+c-1}: those are the blocks
 *     of ranks {@code r+d ..}, which rank {@code r+d} holds as its own first {@code c}. After the step it holds
 *     {@code d + c} blocks; after the last step all {@code n} (the last step's {@code c} is smaller when {@code n} is
 *     not a power of two: the "nonuniform" part).</li>
 *     <li>A local rotation copies scratch block {@code i} to output block {@code (r + i) mod n}.</li>
 * </ol>
 * Every step's message is one contiguous run of scratch, cut into segments of {@link PeerGroup#segmentBytes()}. All
 * receives are posted before the first send (each step lands in its own blocks, so they never overlap), and a
 * segment is sent as soon as every receive that writes its bytes has arrived, so steps overlap instead of waiting for
 * one another whole.
 * <p>
 * In place, the input is this rank's block of the output: it is copied to scratch before anything is written to the
 * output, so the input may lie anywhere in the output.
 * <p>
 * Cost, for an output of {@code m} bytes: {@code ceil(log2 n) alpha + (n-1)/n m beta}. Each rank sends and receives
 * {@code n-1} blocks, like the ring, in {@code ceil(log2 n)} messages instead of {@code n-1}; the rotation is a local
 * copy of the output, not modelled.
 */
public final class BruckAllGatherAlgorithm implements AllGatherAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it (HCCL's "nonuniform Bruck"). */
    public static final String NAME = "NB";

    private static final int PHASE_BRUCK = 20;

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public void allGather(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int sendCount, final DataType type)
    {
        final int n = group.size();
        final int r = group.rank();
        final int blockBytes = sendCount * type.size();
        if (n == 1 || blockBytes == 0)
        {
            Copies.copy(recv, r * blockBytes, send, 0, blockBytes);
            return;
        }
        final int segmentBytes = group.segmentBytes();
        final ByteBuffer work = group.scratch(0, n * blockBytes);
        Copies.copy(work, 0, send, 0, blockBytes);

        final int steps = CostTerms.ceilLog2(n);
        // Receive segments in ascending scratch order (step k lands above step k-1), for awaitBelow.
        final Request[] received = new Request[receivedSegments(n, blockBytes, segmentBytes)];
        final int[] receivedStart = new int[received.length];
        int next = 0;
        for (int step = 0; step < steps; step++)
        {
            final int distance = 1 << step;
            final int from = mod(r + distance, n);
            final int base = distance * blockBytes;
            final int length = Math.min(distance, n - distance) * blockBytes;
            for (int k = 0, segments = Partition.segmentsOf(length, segmentBytes); k < segments; k++)
            {
                final int offset = k * segmentBytes;
                receivedStart[next] = base + offset;
                received[next++] = group.recv(from, Tags.of(PHASE_BRUCK, step, k), work, base + offset,
                    Math.min(segmentBytes, length - offset));
            }
        }

        final Requests sends = new Requests();
        int awaited = 0;
        for (int step = 0; step < steps; step++)
        {
            final int distance = 1 << step;
            final int to = mod(r - distance, n);
            final int length = Math.min(distance, n - distance) * blockBytes;
            for (int k = 0, segments = Partition.segmentsOf(length, segmentBytes); k < segments; k++)
            {
                final int offset = k * segmentBytes;
                final int end = offset + Math.min(segmentBytes, length - offset);
                // Every receive that starts below the segment's end lies in earlier steps' blocks: wait for them.
                while (awaited < received.length && receivedStart[awaited] < end)
                {
                    group.await(received[awaited++]);
                }
                sends.add(group.send(to, Tags.of(PHASE_BRUCK, step, k), work, offset, end - offset));
            }
        }
        Requests.awaitAll(group, received);
        sends.awaitAll(group);

        // Scratch block i belongs at output block (r + i) mod n: blocks 0 .. n-r-1 from this rank's own block on, the
        // rest wrap around to the front. The own block comes from scratch too, not from send: an input that starts
        // where the output starts has been overwritten by block 0 by then.
        Copies.copy(recv, r * blockBytes, work, 0, (n - r) * blockBytes);
        Copies.copy(recv, 0, work, (n - r) * blockBytes, r * blockBytes);
    }

    /**
     * {@inheritDoc}
     * <p>
     * All-gather only: {@code ceil(log2 n) alpha + (n-1)/n m beta}, {@code m} the whole output.
     */
    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        CostTerms.check(worldSize, bytes);
        if (operation != Operation.ALL_GATHER)
        {
            throw CostTerms.unsupported(NAME, operation);
        }
        return CostTerms.ceilLog2(worldSize) * cost.alpha() + CostTerms.share(worldSize, bytes) * cost.beta();
    }

    private static int receivedSegments(final int n, final int blockBytes, final int segmentBytes)
    {
        int segments = 0;
        for (int distance = 1; distance < n; distance <<= 1)
        {
            segments += Partition.segmentsOf(Math.min(distance, n - distance) * blockBytes, segmentBytes);
        }
        return segments;
    }
}
