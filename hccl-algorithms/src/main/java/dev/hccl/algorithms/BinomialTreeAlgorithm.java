package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceAlgorithm;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

import static dev.hccl.algorithms.Partition.mod;

/**
 * The binomial tree rooted at the operation's root: {@code ceil(log2 n)} latencies, so it wins small messages.
 * <p>
 * Ranks are renumbered relative to the root ({@code v = (rank - root) mod n}). Rank {@code v}'s parent is {@code v}
 * with its lowest set bit cleared; its children are {@code v + 2^k} for every {@code 2^k} below that bit. <b>Broadcast</b>
 * flows from the root down: each rank receives from its parent and forwards to its children, largest subtree first.
 * <b>Reduce</b> flows up: each rank reduces its children's partial results into its own, smallest subtree first, then
 * sends the sum to its parent.
 * <p>
 * <b>Pipelining.</b> Data moves in segments: a rank forwards segment {@code k} as soon as it has it, so the depth of
 * the tree costs latency once, not once per segment. In reduce, children are reduced one after another in a fixed
 * order (never two into the same bytes at once), which also makes the result independent of arrival order.
 * <p>
 * <b>Cost</b>, for {@code m} bytes: the root sends (broadcast) or receives (reduce) the whole message once per level,
 * so pipelining hides the tree's depth but not that: broadcast {@code ceil(log2 n) (alpha + m beta)}, reduce
 * {@code ceil(log2 n) (alpha + m beta + m gamma)}.
 */
public final class BinomialTreeAlgorithm implements BroadcastAlgorithm, ReduceAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it. */
    public static final String NAME = "tree";

    private static final int PHASE_BROADCAST = 3;
    private static final int PHASE_REDUCE = 4;

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public void broadcast(
        final PeerGroup group, final ByteBuffer buf, final int count, final DataType type, final int root)
    {
        final int n = group.size();
        final int bytes = count * type.size();
        if (n == 1 || bytes == 0)
        {
            return;
        }
        final int v = mod(group.rank() - root, n);
        final int segmentBytes = group.segmentBytes();
        final int segments = Partition.segmentsOf(bytes, segmentBytes);

        Request[] received = null;
        int childMask = highestChildMask(v, n);
        if (v != 0)
        {
            final int parent = mod((v & (v - 1)) + root, n);
            received = new Request[segments];
            for (int k = 0; k < segments; k++)
            {
                received[k] = group.recv(parent, Tags.of(PHASE_BROADCAST, 0, k), buf, k * segmentBytes,
                    Math.min(segmentBytes, bytes - k * segmentBytes));
            }
        }
        final Requests sends = new Requests();
        for (int k = 0; k < segments; k++)
        {
            if (received != null)
            {
                group.await(received[k]);
            }
            final int offset = k * segmentBytes;
            final int length = Math.min(segmentBytes, bytes - offset);
            for (int mask = childMask; mask > 0; mask >>>= 1)
            {
                if (v + mask < n)
                {
                    sends.add(group.send(mod(v + mask + root, n), Tags.of(PHASE_BROADCAST, 0, k), buf, offset, length));
                }
            }
        }
        sends.awaitAll(group);
    }

    @Override
    public void reduce(
        final PeerGroup group,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int count,
        final DataType type,
        final Reducer reducer,
        final int root)
    {
        final int n = group.size();
        final int bytes = count * type.size();
        final int v = mod(group.rank() - root, n);
        // The root accumulates in its receive buffer; other ranks in scratch, since their send buffer is not ours.
        final ByteBuffer acc = v == 0 ? recv : group.scratch(0, bytes);
        if (acc != send)
        {
            Copies.copy(acc, 0, send, 0, bytes);
        }
        if (n == 1 || bytes == 0)
        {
            return;
        }
        final int segmentBytes = group.segmentBytes();
        final int segments = Partition.segmentsOf(bytes, segmentBytes);
        final int parent = v == 0 ? -1 : mod((v & (v - 1)) + root, n);
        final int lastChildMask = highestChildMask(v, n);
        final Requests sends = new Requests();

        boolean forwarded = false;
        for (int mask = 1; mask <= lastChildMask; mask <<= 1)
        {
            if (v + mask >= n)
            {
                continue;
            }
            final int child = mod(v + mask + root, n);
            final boolean lastChild = nextChildMask(v, n, mask, lastChildMask) == 0;
            final Request[] received = new Request[segments];
            for (int k = 0; k < segments; k++)
            {
                received[k] = group.recvReduce(child, Tags.of(PHASE_REDUCE, 0, k), acc, k * segmentBytes,
                    Math.min(segmentBytes, bytes - k * segmentBytes), reducer);
            }
            for (int k = 0; k < segments; k++)
            {
                group.await(received[k]);
                if (lastChild && parent >= 0)
                {
                    // The last contribution to this segment is in: pass it up while later segments still arrive.
                    sends.add(group.send(parent, Tags.of(PHASE_REDUCE, 0, k), acc, k * segmentBytes,
                        Math.min(segmentBytes, bytes - k * segmentBytes)));
                }
            }
            forwarded = lastChild && parent >= 0;
        }
        if (parent >= 0 && !forwarded)
        {
            for (int k = 0; k < segments; k++)
            {
                sends.add(group.send(parent, Tags.of(PHASE_REDUCE, 0, k), acc, k * segmentBytes,
                    Math.min(segmentBytes, bytes - k * segmentBytes)));
            }
        }
        sends.awaitAll(group);
    }

    /**
     * {@inheritDoc}
     * <p>
     * Broadcast {@code ceil(log2 n) (alpha + m beta)} and reduce {@code ceil(log2 n) (alpha + m beta + m gamma)}.
     */
    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        CostTerms.check(worldSize, bytes);
        final int levels = CostTerms.ceilLog2(worldSize);
        switch (operation)
        {
            case BROADCAST:
                return levels * (cost.alpha() + bytes * cost.beta());
            case REDUCE:
                return levels * (cost.alpha() + bytes * (cost.beta() + cost.gamma()));
            default:
                throw CostTerms.unsupported(NAME, operation);
        }
    }

    /**
     * The largest {@code 2^k} such that {@code v + 2^k} is a child of {@code v}: below {@code v}'s lowest set bit
     * (any power of two for the root), whether or not {@code v + 2^k < n}.
     */
    private static int highestChildMask(final int v, final int n)
    {
        if (v == 0)
        {
            int mask = 1;
            while (mask < n)
            {
                mask <<= 1;
            }
            return mask >>> 1;
        }
        return Integer.lowestOneBit(v) >>> 1;
    }

    private static int nextChildMask(final int v, final int n, final int mask, final int lastChildMask)
    {
        for (int m = mask << 1; m > 0 && m <= lastChildMask; m <<= 1)
        {
            if (v + m < n)
            {
                return m;
            }
        }
        return 0;
    }
}
