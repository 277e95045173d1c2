package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.GatherAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ScatterAlgorithm;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

import static dev.hccl.algorithms.Partition.mod;

/**
 * Scatter and gather on the binomial tree rooted at the operation's root, for every world size (no linear variant:
 * the tree's {@code ceil(log2 n)} latencies are never worse than the linear {@code n-1}).
 * <p>
 * Ranks are renumbered relative to the root ({@code v = (rank - root) mod n}), as in {@link BinomialTreeAlgorithm}:
 * {@code v}'s parent is {@code v} with its lowest set bit cleared, its children are {@code v + 2^k} for every
 * {@code 2^k} below that bit, and its subtree is the relative ranks {@code [v, v + lowbit(v))} (all of them for the
 * root), cut at {@code n}. Each rank handles its subtree's blocks in relative order, so a subtree's blocks are one
 * contiguous run.
 * <p>
 * <b>Scatter</b> flows down. The root puts the blocks in relative order (in place when it is rank 0, else rotated
 * into scratch, one local copy) and sends each child its subtree's run, largest subtree first. A rank receives its
 * own block straight into its output and the rest of its subtree's run into scratch, and forwards each child's part
 * segment by segment as soon as the segments up to it have arrived.
 * <p>
 * <b>Gather</b> flows up, the same messages reversed. A rank receives each child's run into scratch (the root into
 * its output when it is rank 0, else into scratch that it rotates into place at the end) and sends its parent its
 * own block straight from its input, then the rest of its run, each segment as soon as the children's segments that
 * cover it have arrived.
 * <p>
 * Every transfer between a parent and a child is two parts, the child's own block (tag step 0) and the rest of the
 * child's run (tag step 1), each cut into segments of {@code segmentBytes}; so the child's own block needs no copy.
 * <p>
 * <b>Cost</b> ({@code n} ranks, {@code m} bytes at the root in all): {@code ceil(log2 n) alpha + ((n-1)/n) m beta}:
 * the root sends or receives every block but its own, and every level of the tree costs one latency.
 */
public final class BinomialScatterGatherAlgorithm implements ScatterAlgorithm, GatherAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it: the same family as {@link BinomialTreeAlgorithm}. */
    public static final String NAME = "tree";

    private static final int PHASE_SCATTER = 43;
    private static final int PHASE_GATHER = 44;
    /** Tag step of the child's own block. */
    private static final int PART_OWN = 0;
    /** Tag step of the rest of the child's subtree. */
    private static final int PART_REST = 1;

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public void scatter(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int recvCount, final DataType type,
        final int root)
    {
        final int n = group.size();
        final int blockBytes = recvCount * type.size();
        if (blockBytes == 0)
        {
            return;
        }
        final int v = mod(group.rank() - root, n);
        final int segmentBytes = Blocks.alignedSegmentBytes(group.segmentBytes(), type.size());
        final int end = subtreeEnd(v, n);
        // Where relative block j (j > v, or any j at the root) lies in `run`: (j - first) * blockBytes.
        final ByteBuffer run;
        final int first;
        final Arrivals arrived = new Arrivals();
        // This rank's own block, straight into recv; awaited only at the end, as nothing is forwarded from it.
        final Arrivals ownBlock = v == 0 ? null : new Arrivals();
        if (v == 0)
        {
            run = relativeOrder(group, send, blockBytes, root);
            first = 0;
        }
        else
        {
            run = group.scratch(0, (end - v - 1) * blockBytes);
            first = v + 1;
            final int parent = mod((v & (v - 1)) + root, n);
            receiveRun(group, parent, PHASE_SCATTER, PART_OWN, recv, 0, blockBytes, segmentBytes, ownBlock);
            receiveRun(group, parent, PHASE_SCATTER, PART_REST, run, 0, (end - v - 1) * blockBytes, segmentBytes,
                arrived);
        }
        final Requests sends = new Requests();
        for (int mask = highestChildMask(v, n); mask > 0; mask >>>= 1)
        {
            final int child = v + mask;
            if (child >= n)
            {
                continue;
            }
            final int to = mod(child + root, n);
            final int childEnd = subtreeEnd(child, n);
            sendRun(group, to, PHASE_SCATTER, PART_OWN, run, (child - first) * blockBytes, blockBytes, segmentBytes,
                arrived, sends);
            sendRun(group, to, PHASE_SCATTER, PART_REST, run, (child + 1 - first) * blockBytes,
                (childEnd - child - 1) * blockBytes, segmentBytes, arrived, sends);
        }
        arrived.awaitAll(group);
        if (ownBlock == null)
        {
            sends.awaitAll(group);
            // Last: at the root, recv may overlap send, which the sends read until now.
            Copies.copy(recv, 0, run, 0, blockBytes);
        }
        else
        {
            ownBlock.awaitAll(group);
            sends.awaitAll(group);
        }
    }

    @Override
    public void gather(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int sendCount, final DataType type,
        final int root)
    {
        final int n = group.size();
        final int blockBytes = sendCount * type.size();
        if (blockBytes == 0)
        {
            return;
        }
        final int v = mod(group.rank() - root, n);
        final int segmentBytes = Blocks.alignedSegmentBytes(group.segmentBytes(), type.size());
        final int end = subtreeEnd(v, n);
        final ByteBuffer run;
        final int first;
        if (v == 0)
        {
            // Rank 0 gathers in place; another root in relative order in scratch, rotated into recv at the end.
            run = root == 0 ? recv : group.scratch(0, n * blockBytes);
            first = 0;
            // First, before anything lands in recv: send may overlap it.
            Copies.copy(run, 0, send, 0, blockBytes);
        }
        else
        {
            run = group.scratch(0, (end - v - 1) * blockBytes);
            first = v + 1;
        }
        final Arrivals arrived = new Arrivals();
        for (int mask = 1; v + mask < end; mask <<= 1)
        {
            final int child = v + mask;
            final int from = mod(child + root, n);
            final int childEnd = subtreeEnd(child, n);
            receiveRun(group, from, PHASE_GATHER, PART_OWN, run, (child - first) * blockBytes, blockBytes,
                segmentBytes, arrived);
            receiveRun(group, from, PHASE_GATHER, PART_REST, run, (child + 1 - first) * blockBytes,
                (childEnd - child - 1) * blockBytes, segmentBytes, arrived);
        }
        final Requests sends = new Requests();
        if (v != 0)
        {
            final int parent = mod((v & (v - 1)) + root, n);
            sendRun(group, parent, PHASE_GATHER, PART_OWN, send, 0, blockBytes, segmentBytes, null, sends);
            sendRun(group, parent, PHASE_GATHER, PART_REST, run, 0, (end - v - 1) * blockBytes, segmentBytes,
                arrived, sends);
        }
        arrived.awaitAll(group);
        sends.awaitAll(group);
        if (v == 0 && root != 0)
        {
            // Relative block j is rank j + root's: the first n - root go from block root on, the rest wrap to 0.
            Copies.copy(recv, root * blockBytes, run, 0, (n - root) * blockBytes);
            Copies.copy(recv, 0, run, (n - root) * blockBytes, root * blockBytes);
        }
    }

    /**
     * The root's blocks in relative order: {@code send} itself when the root is rank 0, else a rotated copy.
     */
    private static ByteBuffer relativeOrder(
        final PeerGroup group, final ByteBuffer send, final int blockBytes, final int root)
    {
        final int n = group.size();
        if (root == 0)
        {
            return send;
        }
        final ByteBuffer rotated = group.scratch(0, n * blockBytes);
        Copies.copy(rotated, 0, send, root * blockBytes, (n - root) * blockBytes);
        Copies.copy(rotated, (n - root) * blockBytes, send, 0, root * blockBytes);
        return rotated;
    }

    /**
     * Posts the receives of one part, segment by segment, into {@code dst} from byte {@code offset}.
     */
    private static void receiveRun(
        final PeerGroup group, final int from, final int phase, final int part, final ByteBuffer dst,
        final int offset, final int bytes, final int segmentBytes, final Arrivals arrived)
    {
        for (int k = 0, segments = Partition.segmentsOf(bytes, segmentBytes); k < segments; k++)
        {
            final int start = offset + k * segmentBytes;
            arrived.add(group.recv(from, Tags.of(phase, part, k), dst, start, Math.min(segmentBytes,
                bytes - k * segmentBytes)), start);
        }
    }

    /**
     * Sends one part, segment by segment, from {@code src} at byte {@code offset}, each once the receives in
     * {@code arrived} (when given) that cover it have completed.
     */
    private static void sendRun(
        final PeerGroup group, final int to, final int phase, final int part, final ByteBuffer src,
        final int offset, final int bytes, final int segmentBytes, final Arrivals arrived, final Requests sends)
    {
        for (int k = 0, segments = Partition.segmentsOf(bytes, segmentBytes); k < segments; k++)
        {
            final int start = offset + k * segmentBytes;
            final int length = Math.min(segmentBytes, bytes - k * segmentBytes);
            if (arrived != null)
            {
                arrived.awaitBefore(group, start + length);
            }
            sends.add(group.send(to, Tags.of(phase, part, k), src, start, length));
        }
    }

    /** One past the last relative rank of {@code v}'s subtree. */
    private static int subtreeEnd(final int v, final int n)
    {
        return v == 0 ? n : Math.min(n, v + Integer.lowestOneBit(v));
    }

    /**
     * The largest {@code 2^k} such that {@code v + 2^k} may be a child of {@code v}: below {@code v}'s lowest set bit
     * (below {@code n} for the root).
     */
    private static int highestChildMask(final int v, final int n)
    {
        if (v == 0)
        {
            return n > 1 ? Integer.highestOneBit(n - 1) : 0;
        }
        return Integer.lowestOneBit(v) >>> 1;
    }

    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        if (operation != Operation.SCATTER && operation != Operation.GATHER)
        {
            throw new IllegalArgumentException(NAME + " (scatter/gather) does not implement " + operation.displayName());
        }
        final int levels = 32 - Integer.numberOfLeadingZeros(Math.max(0, worldSize - 1));
        return levels * cost.alpha() + (double)(worldSize - 1) / worldSize * bytes * cost.beta();
    }
}
