package dev.hccl.algorithms;

import dev.hccl.api.DataType;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

import static dev.hccl.algorithms.Partition.mod;

/**
 * Broadcast as a binomial scatter followed by a ring all-gather (van de Geijn; MPICH's
 * {@code scatter_ring_allgather}): the root sends each byte about twice instead of {@code ceil(log2 n)} times, so it
 * wins large messages over the binomial tree. {@link RingAlgorithm#broadcast} runs it.
 * <p>
 * Ranks are renumbered relative to the root, {@code v = (rank - root) mod n}, and the buffer is cut into {@code n}
 * chunks of nearly equal element counts ({@link Partition}: uneven when {@code n} does not divide the count, empty
 * when the count is below {@code n}); chunk {@code v} is rank {@code v}'s.
 * <ol>
 *     <li><b>Scatter.</b> Rank {@code v}'s subtree in the binomial tree is ranks {@code v .. v + s(v) - 1}, with
 *     {@code s(v)} the lowest set bit of {@code v} (all {@code n} for the root), cut at {@code n}. Each rank
 *     receives its subtree's chunks, one contiguous run, from its parent ({@code v} with its lowest set bit
 *     cleared), and forwards to each child {@code v + 2^k} (every {@code 2^k} below {@code s(v)}) that child's
 *     subtree's chunks: the root largest subtree first, since it has all the data and the largest subtree is the
 *     deepest; the others in the order their data arrives.</li>
 *     <li><b>Ring all-gather.</b> In step {@code s} (0 to n-2) rank {@code v} sends chunk {@code v - s} to its
 *     right neighbour {@code v + 1} and receives chunk {@code v - s - 1} from its left one, as in
 *     {@link RingAlgorithm}. A chunk that the receiver already holds from the scatter is not sent at all: that spares
 *     the root every receive and rank {@code v} its last {@code s(v) - 1} steps, and it means no receive ever writes
 *     into bytes the scatter is still writing or sending.</li>
 * </ol>
 * <b>Pipelining.</b> Messages are per chunk and segment ({@link PeerGroup#segmentBytes()}). Every receive of both
 * phases is posted before the first send; a rank forwards a scatter segment as soon as it has arrived, and sends
 * segment {@code k} of ring step {@code s} as soon as segment {@code k} of that chunk has arrived, by the scatter or
 * by ring step {@code s - 1}.
 * <p>
 * Nothing is reduced: every rank ends with the root's bytes. Cost, for {@code m} bytes:
 * {@code (ceil(log2 n) + n - 1) alpha + 2 (n-1)/n m beta}; the scatter's {@code ceil(log2 n)} latencies and
 * {@code (n-1)/n m} from the root, then the ring's {@code n-1} steps of {@code m/n} each.
 */
final class ScatterRingBroadcast
{
    private static final int PHASE_SCATTER = 21;
    private static final int PHASE_RING = 22;

    private ScatterRingBroadcast()
    {
    }

    /**
     * Runs the broadcast.
     *
     * @param group the ranks.
     * @param buf   the data at the root, the destination elsewhere, from byte 0.
     * @param count elements.
     * @param type  element type.
     * @param root  the sender.
     */
    static void broadcast(
        final PeerGroup group, final ByteBuffer buf, final int count, final DataType type, final int root)
    {
        final int n = group.size();
        if (n == 1 || count == 0)
        {
            return;
        }
        final int v = mod(group.rank() - root, n);
        final Partition chunks = new Partition(count, n, type.size(), group.segmentBytes());
        final int held = subtree(v, n);

        // The scatter's receives, by chunk: rank v gets chunks v .. v + held - 1 from its parent (the root none).
        final Request[][] scattered = new Request[n][];
        if (v != 0)
        {
            final int parent = mod((v & (v - 1)) + root, n);
            for (int chunk = v; chunk < v + held; chunk++)
            {
                scattered[chunk] = new Request[chunks.segments(chunk)];
                for (int k = 0; k < scattered[chunk].length; k++)
                {
                    scattered[chunk][k] = group.recv(parent, Tags.of(PHASE_SCATTER, chunk, k), buf,
                        chunks.segmentOffset(chunk, k), chunks.segmentBytes(chunk, k));
                }
            }
        }

        // The ring's receives, by step: chunk v - s - 1 from the left, unless the scatter brings it.
        final int left = mod(v - 1 + root, n);
        final Request[][] gathered = new Request[n - 1][];
        for (int step = 0; step < n - 1; step++)
        {
            final int chunk = mod(v - step - 1, n);
            if (!holds(v, held, chunk))
            {
                gathered[step] = new Request[chunks.segments(chunk)];
                for (int k = 0; k < gathered[step].length; k++)
                {
                    gathered[step][k] = group.recv(left, Tags.of(PHASE_RING, step, k), buf,
                        chunks.segmentOffset(chunk, k), chunks.segmentBytes(chunk, k));
                }
            }
        }

        final Requests sends = new Requests();
        scatterToChildren(group, buf, chunks, root, v, scattered, sends);

        final int right = mod(v + 1, n);
        final int rightHeld = subtree(right, n);
        for (int step = 0; step < n - 1; step++)
        {
            final int chunk = mod(v - step, n);
            if (holds(right, rightHeld, chunk))
            {
                continue;
            }
            // Step 0's chunk is v's own; a later one came from the left in the step before, or by the scatter.
            final Request[] source = holds(v, held, chunk) ? scattered[chunk] : gathered[step - 1];
            for (int k = 0, segments = chunks.segments(chunk); k < segments; k++)
            {
                if (source != null)
                {
                    group.await(source[k]);
                }
                sends.add(group.send(mod(right + root, n), Tags.of(PHASE_RING, step, k), buf,
                    chunks.segmentOffset(chunk, k), chunks.segmentBytes(chunk, k)));
            }
        }

        for (final Request[] chunk : scattered)
        {
            if (chunk != null)
            {
                Requests.awaitAll(group, chunk);
            }
        }
        for (final Request[] step : gathered)
        {
            if (step != null)
            {
                Requests.awaitAll(group, step);
            }
        }
        sends.awaitAll(group);
    }

    /**
     * Sends each child {@code v + 2^k} its subtree's chunks, each segment once this rank has it.
     */
    private static void scatterToChildren(
        final PeerGroup group,
        final ByteBuffer buf,
        final Partition chunks,
        final int root,
        final int v,
        final Request[][] scattered,
        final Requests sends)
    {
        final int n = group.size();
        // Children are v + 2^k for every 2^k below v's lowest set bit; for the root, every 2^k below n.
        final int top = v == 0 ? Integer.highestOneBit(n - 1) : Integer.lowestOneBit(v) >>> 1;
        if (top == 0)
        {
            return;
        }
        // The root has everything: largest subtree first. Others: smallest first, the order their data arrives in.
        final boolean descending = v == 0;
        for (int i = 0, children = Integer.numberOfTrailingZeros(top) + 1; i < children; i++)
        {
            final int mask = descending ? top >>> i : 1 << i;
            final int child = v + mask;
            if (child >= n)
            {
                continue;
            }
            final int end = Math.min(child + mask, n);
            for (int chunk = child; chunk < end; chunk++)
            {
                for (int k = 0, segments = chunks.segments(chunk); k < segments; k++)
                {
                    if (scattered[chunk] != null)
                    {
                        group.await(scattered[chunk][k]);
                    }
                    sends.add(group.send(mod(child + root, n), Tags.of(PHASE_SCATTER, chunk, k), buf,
                        chunks.segmentOffset(chunk, k), chunks.segmentBytes(chunk, k)));
                }
            }
        }
    }

    /**
     * The size of relative rank {@code v}'s subtree: its lowest set bit, cut at {@code n}; all of them for the root.
     */
    private static int subtree(final int v, final int n)
    {
        return v == 0 ? n : Math.min(Integer.lowestOneBit(v), n - v);
    }

    private static boolean holds(final int v, final int held, final int chunk)
    {
        return chunk >= v && chunk < v + held;
    }
}
