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
import java.util.Arrays;

/**
 * NCCL's double binary tree all-reduce: logarithmic latency like a tree, while every rank sends and receives about
 * as much as in the ring, because no rank is an interior node of both trees.
 * <p>
 * <b>The trees.</b> The first is NCCL's in-order binary tree over ranks {@code 0..n-1}: rank {@code r > 0} with
 * lowest set bit {@code b} has parent {@code (r - b) | 2b}, or {@code r - b} when that is not a rank; rank 0 is the
 * root, with one child. Leaves are the odd ranks, interior nodes even ones. The second tree is the first mirrored
 * ({@code r -> n-1-r}) when {@code n} is even, so that its interior nodes are the odd ranks, and shifted
 * ({@code r -> r+1 mod n}) when {@code n} is odd; there rank 0 can be interior in both (as in NCCL). Every node has at
 * most two children.
 * <p>
 * <b>The schedule.</b> The buffer is cut into two halves; half {@code t} is all-reduced over tree {@code t}, both at
 * once, each half in segments of {@link PeerGroup#segmentBytes()}:
 * <ol>
 * <li>Every receive is posted first: each child's contribution per segment (the first child's reduced into this
 * rank's accumulator as it arrives, the second's into a scratch buffer), and the result from the parent.</li>
 * <li><b>Up</b>: for segment {@code k}, once the first child's part has been reduced in, the second child's is reduced
 * into the accumulator, so the accumulator holds {@code (own op first) op second}, a fixed order whatever arrives
 * first; the segment then goes to the parent. At the root it is final: copied into the output and sent down.</li>
 * <li><b>Down</b>: segment {@code k} from the parent lands in the output and is forwarded to the children. A rank
 * handles the down part of segment {@code k - LAG} after the up part of segment {@code k}, so that the two directions
 * overlap without waiting for a round trip per segment.</li>
 * </ol>
 * Each element is reduced in one fixed tree order and then only copied, so every rank ends with the same bits.
 * <p>
 * <b>Cost</b> of an all-reduce of {@code m} bytes, with {@code D} the depth of the trees:
 * {@code 2 D alpha + 2 m beta + m gamma} (each tree's half travels up and down {@code D} hops, pipelined; a rank
 * sends about {@code 2m} bytes in all, and an interior node reduces two children's halves).
 */
public final class DoubleBinaryTreeAlgorithm implements AllReduceAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it: one name per family, each operation its own tree. */
    public static final String NAME = "tree";

    private static final int PHASE_UP = 24;
    private static final int PHASE_DOWN = 25;
    private static final int TREES = 2;
    /** The accumulator, at the same offsets as the buffer. */
    private static final int ACC_SLOT = 0;
    /** The second child's contributions, at the same offsets as the buffer. */
    private static final int SECOND_CHILD_SLOT = 1;

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
        final int bytes = count * type.size();
        if (LocalCases.allReduceDone(group, send, recv, count, bytes))
        {
            return;
        }
        final int r = group.rank();
        final Partition halves = new Partition(count, TREES, type.size(), group.segmentBytes());
        // Own data goes to the accumulator before any receive into recv is posted: send may be recv.
        final ByteBuffer acc = group.scratch(ACC_SLOT, bytes);
        Copies.copy(acc, 0, send, 0, bytes);
        final ByteBuffer second = group.scratch(SECOND_CHILD_SLOT, bytes);

        final Node[] nodes = { node(0, r, n), node(1, r, n) };
        final Request[][][] up = new Request[TREES][][];
        final Request[][] down = new Request[TREES][];
        for (int t = 0; t < TREES; t++)
        {
            final Node node = nodes[t];
            final int segments = halves.segments(t);
            up[t] = new Request[node.children.length][segments];
            down[t] = new Request[node.parent < 0 ? 0 : segments];
            for (int k = 0; k < segments; k++)
            {
                final int offset = halves.segmentOffset(t, k);
                final int length = halves.segmentBytes(t, k);
                for (int c = 0; c < node.children.length; c++)
                {
                    // The first child reduces straight into the accumulator; the second waits in scratch for it.
                    up[t][c][k] = c == 0 ?
                        group.recvReduce(node.children[c], Tags.of(PHASE_UP, t, k), acc, offset, length, reducer) :
                        group.recv(node.children[c], Tags.of(PHASE_UP, t, k), second, offset, length);
                }
                if (node.parent >= 0)
                {
                    down[t][k] = group.recv(node.parent, Tags.of(PHASE_DOWN, t, k), recv, offset, length);
                }
            }
        }

        final Requests sends = new Requests();
        final int lag = 2 * depth(n);
        final int segments = Math.max(halves.segments(0), halves.segments(1));
        for (int k = 0; k < segments + lag; k++)
        {
            for (int t = 0; t < TREES; t++)
            {
                if (k < halves.segments(t))
                {
                    up(group, nodes[t], t, k, halves, acc, second, recv, reducer, up[t], sends);
                }
            }
            for (int t = 0; t < TREES; t++)
            {
                final int j = k - lag;
                if (j >= 0 && j < halves.segments(t) && nodes[t].parent >= 0)
                {
                    group.await(down[t][j]);
                    sendToChildren(group, nodes[t], t, j, halves, recv, sends);
                }
            }
        }
        sends.awaitAll(group);
    }

    /** The up part of segment {@code k} of tree {@code t}: reduce the children's contributions in order, pass on. */
    private static void up(
        final PeerGroup group, final Node node, final int t, final int k, final Partition halves,
        final ByteBuffer acc, final ByteBuffer second, final ByteBuffer recv, final Reducer reducer,
        final Request[][] received, final Requests sends)
    {
        final int offset = halves.segmentOffset(t, k);
        final int length = halves.segmentBytes(t, k);
        for (int c = 0; c < node.children.length; c++)
        {
            group.await(received[c][k]);
            if (c > 0)
            {
                reducer.reduce(acc, offset, second, offset, length / reducer.elementSize());
            }
        }
        if (node.parent >= 0)
        {
            sends.add(group.send(node.parent, Tags.of(PHASE_UP, t, k), acc, offset, length));
        }
        else
        {
            Copies.copy(recv, offset, acc, offset, length);
            sendToChildren(group, node, t, k, halves, recv, sends);
        }
    }

    private static void sendToChildren(
        final PeerGroup group, final Node node, final int t, final int k, final Partition halves,
        final ByteBuffer recv, final Requests sends)
    {
        final int offset = halves.segmentOffset(t, k);
        final int length = halves.segmentBytes(t, k);
        for (final int child : node.children)
        {
            sends.add(group.send(child, Tags.of(PHASE_DOWN, t, k), recv, offset, length));
        }
    }

    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        if (operation != Operation.ALL_REDUCE)
        {
            throw new IllegalArgumentException(
                "the double binary tree does not implement " + operation.displayName());
        }
        if (worldSize == 1)
        {
            return 0;
        }
        return 2 * depth(worldSize) * cost.alpha() + 2 * bytes * cost.beta() + bytes * cost.gamma();
    }

    /** A rank's place in one tree. */
    record Node(int parent, int[] children)
    {
    }

    /**
     * Rank {@code r}'s parent and children in tree {@code t}, the children in increasing rank order (the order of
     * reduction).
     */
    static Node node(final int t, final int r, final int n)
    {
        final int parent = toTree(t, btreeParent(fromTree(t, r, n), n), n);
        int children = 0;
        final int[] found = new int[2];
        for (int c = 0; c < n; c++)
        {
            if (c != r && toTree(t, btreeParent(fromTree(t, c, n), n), n) == r)
            {
                if (children == found.length)
                {
                    throw new IllegalStateException("rank " + r + " has more than two children in tree " + t);
                }
                found[children++] = c;
            }
        }
        final int[] sorted = Arrays.copyOf(found, children);
        Arrays.sort(sorted);
        return new Node(parent, sorted);
    }

    /** NCCL's in-order binary tree: the parent of {@code r}, or -1 for the root, 0. */
    static int btreeParent(final int r, final int n)
    {
        if (r == 0)
        {
            return -1;
        }
        final int bit = Integer.lowestOneBit(r);
        final int up = (r ^ bit) | (bit << 1);
        return up < n ? up : r ^ bit;
    }

    /** Rank {@code r} of the first tree as a rank of tree {@code t} (-1 stays -1). */
    private static int toTree(final int t, final int r, final int n)
    {
        if (t == 0 || r < 0)
        {
            return r;
        }
        return n % 2 == 0 ? n - 1 - r : (r + 1) % n;
    }

    /** The inverse of {@link #toTree}. */
    private static int fromTree(final int t, final int r, final int n)
    {
        if (t == 0)
        {
            return r;
        }
        return n % 2 == 0 ? n - 1 - r : (r - 1 + n) % n;
    }

    /** Hops from the root to the deepest leaf of the first tree (the second is the same tree renumbered). */
    static int depth(final int n)
    {
        int deepest = 0;
        for (int r = 1; r < n; r++)
        {
            int hops = 0;
            for (int v = r; v != 0; v = btreeParent(v, n))
            {
                hops++;
            }
            deepest = Math.max(deepest, hops);
        }
        return deepest;
    }
}
