package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

/**
 * Recursive halving and doubling (Rabenseifner's all-reduce, MPICH's choice for large all-reduce; HCCL's
 * {@code H-D_R}): {@code 2 log2 n} latencies like a tree, and the ring's bandwidth term.
 * <p>
 * <b>Non-powers of two</b> are folded first, as MPICH does: with {@code p} the largest power of two not above
 * {@code n} and {@code rem = n - p}, the first {@code 2 rem} ranks pair up; the even one of each pair sends its whole
 * input to the odd one, which reduces it into its own, and then sits out. The remaining {@code p} ranks are renumbered
 * {@code v = 0..p-1} (the odd rank {@code 2i+1} of pair {@code i} becomes {@code v = i}, rank {@code r >= 2 rem}
 * becomes {@code r - rem}). At the end each odd rank sends the result back to its even partner.
 * <p>
 * The buffer is cut into {@code p} windows, window {@code v} for renumbered rank {@code v}: nearly equal for
 * all-reduce; for reduce-scatter and all-gather the blocks of the ranks that {@code v} stands for (one block, or
 * two for a folded pair), which are contiguous because the renumbering keeps rank order.
 * <ol>
 * <li><b>Reduce-scatter by recursive halving</b>: in step {@code s = 0..log2 p - 1}, with {@code d = p / 2^(s+1)},
 * rank {@code v} pairs with {@code v xor d}. Each holds the windows of its aligned group of {@code 2d} renumbered
 * ranks; it sends the half of them that holds the partner's windows and receives and reduces the half that holds its
 * own. After the last step {@code v} holds window {@code v} reduced over every rank.</li>
 * <li><b>All-gather by recursive doubling</b>, the same steps in reverse: with {@code d = 2^s}, rank {@code v}
 * exchanges its aligned group of {@code d} windows with {@code v xor d}'s.</li>
 * </ol>
 * Reduce-scatter alone is the fold, step 1 and the return of the even rank's block; all-gather alone is the even
 * ranks' blocks sent to their odd partners, step 2 and the return of everything.
 * <p>
 * <b>Same bits everywhere.</b> Every combination is one commutative operation of two partial results (the fold, and
 * each halving step), in a pattern fixed by the ranks, never by arrival order; the result is then only copied. So
 * every rank ends with the same bits, run after run.
 * <p>
 * Transfers are cut into segments of {@link PeerGroup#segmentBytes()}; every receive of a step is posted before its
 * sends. <b>Cost</b> for all-reduce of {@code m} bytes:
 * {@code 2 log2(p) alpha + 2 (p-1)/p m beta + (p-1)/p m gamma}, plus {@code 2 alpha + 2 m beta + m gamma} for the
 * fold when {@code n} is not a power of two. Reduce-scatter of {@code m} input bytes:
 * {@code log2(p) alpha + (p-1)/p m (beta + gamma)}, plus {@code 2 alpha + m (beta + gamma) + m/n beta} for the fold.
 * All-gather of {@code m} output bytes: {@code log2(p) alpha + (p-1)/p m beta}, plus
 * {@code 2 alpha + m/n beta + m beta} for the fold.
 */
public final class HalvingDoublingAlgorithm
    implements AllReduceAlgorithm, ReduceScatterAlgorithm, AllGatherAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it. */
    public static final String NAME = "H-D_R";

    private static final int PHASE_FOLD = 20;
    private static final int PHASE_HALVING = 21;
    private static final int PHASE_DOUBLING = 22;
    private static final int PHASE_UNFOLD = 23;

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
        final int bytes = count * type.size();
        if (LocalCases.allReduceDone(group, send, recv, count, bytes))
        {
            return;
        }
        final Fold fold = new Fold(group.rank(), group.size());
        if (fold.sitsOut())
        {
            // Hand the input to the odd partner, and only then let the result overwrite it (send may be recv).
            sendRange(group, fold.partner, PHASE_FOLD, 0, send, 0, bytes).awaitAll(group);
            Requests.awaitAll(group, postRange(group, fold.partner, PHASE_UNFOLD, 0, recv, 0, bytes, null));
            return;
        }
        if (send != recv)
        {
            Copies.copy(recv, 0, send, 0, bytes);
        }
        if (fold.holdsPair())
        {
            Requests.awaitAll(group, postRange(group, fold.partner, PHASE_FOLD, 0, recv, 0, bytes, reducer));
        }
        final int[] cut = evenCut(count, fold.p, type.size());
        reduceScatterByHalving(group, fold, recv, cut, reducer);
        allGatherByDoubling(group, fold, recv, cut);
        if (fold.holdsPair())
        {
            sendRange(group, fold.partner, PHASE_UNFOLD, 0, recv, 0, bytes).awaitAll(group);
        }
    }

    @Override
    public void reduceScatter(
        final PeerGroup group,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int recvCount,
        final DataType type,
        final Reducer reducer)
    {
        final int n = group.size();
        final int r = group.rank();
        final int blockBytes = recvCount * type.size();
        if (n == 1 || recvCount == 0)
        {
            Copies.copy(recv, 0, send, 0, blockBytes);
            return;
        }
        final Fold fold = new Fold(r, n);
        if (fold.sitsOut())
        {
            // In place, recv lies inside send: receive only once the partner has all of send.
            sendRange(group, fold.partner, PHASE_FOLD, 0, send, 0, n * blockBytes).awaitAll(group);
            Requests.awaitAll(group, postRange(group, fold.partner, PHASE_UNFOLD, 0, recv, 0, blockBytes, null));
            return;
        }
        // The send buffer is read-only to us: reduce in a scratch copy, then hand out the blocks.
        final ByteBuffer work = group.scratch(0, n * blockBytes);
        Copies.copy(work, 0, send, 0, n * blockBytes);
        if (fold.holdsPair())
        {
            Requests.awaitAll(group,
                postRange(group, fold.partner, PHASE_FOLD, 0, work, 0, n * blockBytes, reducer));
        }
        reduceScatterByHalving(group, fold, work, blockCut(fold, recvCount, type.size()), reducer);
        final Requests sends = fold.holdsPair() ?
            sendRange(group, fold.partner, PHASE_UNFOLD, 0, work, fold.partner * blockBytes,
                (fold.partner + 1) * blockBytes) : null;
        Copies.copy(recv, 0, work, r * blockBytes, blockBytes);
        if (sends != null)
        {
            sends.awaitAll(group);
        }
    }

    @Override
    public void allGather(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int sendCount, final DataType type)
    {
        final int n = group.size();
        final int r = group.rank();
        final int blockBytes = sendCount * type.size();
        Copies.copy(recv, r * blockBytes, send, 0, blockBytes);
        if (n == 1 || sendCount == 0)
        {
            return;
        }
        final Fold fold = new Fold(r, n);
        if (fold.sitsOut())
        {
            sendRange(group, fold.partner, PHASE_FOLD, 0, recv, r * blockBytes, (r + 1) * blockBytes)
                .awaitAll(group);
            Requests.awaitAll(group, postRange(group, fold.partner, PHASE_UNFOLD, 0, recv, 0, n * blockBytes, null));
            return;
        }
        if (fold.holdsPair())
        {
            Requests.awaitAll(group,
                postRange(group, fold.partner, PHASE_FOLD, 0, recv, fold.partner * blockBytes,
                    (fold.partner + 1) * blockBytes, null));
        }
        allGatherByDoubling(group, fold, recv, blockCut(fold, sendCount, type.size()));
        if (fold.holdsPair())
        {
            sendRange(group, fold.partner, PHASE_UNFOLD, 0, recv, 0, n * blockBytes).awaitAll(group);
        }
    }

    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        final int p = Integer.highestOneBit(worldSize);
        final int steps = Integer.numberOfTrailingZeros(p);
        final boolean folded = p != worldSize;
        final double share = (p - 1) / (double)p * bytes;
        final double a = cost.alpha();
        final double b = cost.beta();
        final double g = cost.gamma();
        return switch (operation)
        {
            case ALL_REDUCE -> 2 * steps * a + 2 * share * b + share * g +
                (folded ? 2 * a + 2 * bytes * b + bytes * g : 0);
            case REDUCE_SCATTER -> steps * a + share * (b + g) +
                (folded ? 2 * a + bytes * (b + g) + bytes / (double)worldSize * b : 0);
            case ALL_GATHER -> steps * a + share * b +
                (folded ? 2 * a + bytes / (double)worldSize * b + bytes * b : 0);
            default -> throw new IllegalArgumentException(NAME + " does not implement " + operation.displayName());
        };
    }

    /**
     * Recursive halving over the windows of {@code cut}: afterwards window {@code v} of {@code work} holds the
     * reduction over every rank.
     */
    private static void reduceScatterByHalving(
        final PeerGroup group, final Fold fold, final ByteBuffer work, final int[] cut, final Reducer reducer)
    {
        final int v = fold.virtual;
        int step = 0;
        for (int d = fold.p >>> 1; d > 0; d >>>= 1, step++)
        {
            final int partnerVirtual = v ^ d;
            final int peer = fold.real(partnerVirtual);
            // Both hold the windows of the aligned group of 2d; each keeps the half of d windows it belongs to.
            final int mine = v & ~(d - 1);
            final int theirs = partnerVirtual & ~(d - 1);
            final Request[] received = postRange(group, peer, PHASE_HALVING, step, work, cut[mine], cut[mine + d],
                reducer);
            final Requests sends = sendRange(group, peer, PHASE_HALVING, step, work, cut[theirs], cut[theirs + d]);
            // The next step sends part of what this one reduces: wait for all of it.
            Requests.awaitAll(group, received);
            sends.awaitAll(group);
        }
    }

    /**
     * Recursive doubling over the windows of {@code cut}: window {@code v} of {@code work} must hold this rank's
     * part; afterwards every window does.
     */
    private static void allGatherByDoubling(
        final PeerGroup group, final Fold fold, final ByteBuffer work, final int[] cut)
    {
        final int v = fold.virtual;
        int step = 0;
        for (int d = 1; d < fold.p; d <<= 1, step++)
        {
            final int partnerVirtual = v ^ d;
            final int peer = fold.real(partnerVirtual);
            final int mine = v & ~(d - 1);
            final int theirs = partnerVirtual & ~(d - 1);
            final Request[] received = postRange(group, peer, PHASE_DOUBLING, step, work, cut[theirs],
                cut[theirs + d], null);
            final Requests sends = sendRange(group, peer, PHASE_DOUBLING, step, work, cut[mine], cut[mine + d]);
            Requests.awaitAll(group, received);
            sends.awaitAll(group);
        }
    }

    /** Byte offsets of {@code p} nearly equal windows of {@code count} elements (the first ones one longer). */
    private static int[] evenCut(final int count, final int p, final int elementSize)
    {
        final Partition windows = new Partition(count, p, elementSize, Integer.MAX_VALUE);
        final int[] cut = new int[p + 1];
        for (int v = 0; v <= p; v++)
        {
            cut[v] = v == p ? count * elementSize : windows.chunkOffset(v);
        }
        return cut;
    }

    /** Byte offsets of the windows that hold the blocks of the ranks each renumbered rank stands for. */
    private static int[] blockCut(final Fold fold, final int blockCount, final int elementSize)
    {
        final int[] cut = new int[fold.p + 1];
        for (int v = 0; v <= fold.p; v++)
        {
            cut[v] = fold.firstRank(v) * blockCount * elementSize;
        }
        return cut;
    }

    /** Posts the receives of bytes {@code [from, to)}, one per segment, reduced when {@code reducer} is given. */
    private static Request[] postRange(
        final PeerGroup group, final int peer, final int phase, final int step, final ByteBuffer buf,
        final int from, final int to, final Reducer reducer)
    {
        final int segmentBytes = group.segmentBytes();
        final Request[] received = new Request[Partition.segmentsOf(to - from, segmentBytes)];
        for (int k = 0; k < received.length; k++)
        {
            final int offset = from + k * segmentBytes;
            received[k] = group.recvReduce(peer, Tags.of(phase, step, k), buf, offset,
                Math.min(segmentBytes, to - offset), reducer);
        }
        return received;
    }

    /** Sends bytes {@code [from, to)}, one message per segment. */
    private static Requests sendRange(
        final PeerGroup group, final int peer, final int phase, final int step, final ByteBuffer buf,
        final int from, final int to)
    {
        final int segmentBytes = group.segmentBytes();
        final Requests sends = new Requests();
        for (int k = 0, segments = Partition.segmentsOf(to - from, segmentBytes); k < segments; k++)
        {
            // k * segmentBytes < to - from, so no int here can overflow, even for a buffer near 2 GiB.
            final int offset = from + k * segmentBytes;
            sends.add(group.send(peer, Tags.of(phase, step, k), buf, offset, Math.min(segmentBytes, to - offset)));
        }
        return sends;
    }

    /** The fold of a non-power-of-two world onto {@code p} ranks, seen from one rank. */
    private static final class Fold
    {
        final int p;
        final int rem;
        /** This rank's number among the {@code p}, or -1 when it sits out. */
        final int virtual;
        /** The other rank of this rank's pair, or -1 when it has none. */
        final int partner;

        Fold(final int rank, final int n)
        {
            p = Integer.highestOneBit(n);
            rem = n - p;
            if (rank < 2 * rem)
            {
                virtual = (rank & 1) == 0 ? -1 : rank >>> 1;
                partner = rank ^ 1;
            }
            else
            {
                virtual = rank - rem;
                partner = -1;
            }
        }

        boolean sitsOut()
        {
            return virtual < 0;
        }

        /** Whether this rank also holds its even partner's data. */
        boolean holdsPair()
        {
            return virtual >= 0 && partner >= 0;
        }

        /** The rank that renumbered rank {@code v} runs on. */
        int real(final int v)
        {
            return v < rem ? 2 * v + 1 : v + rem;
        }

        /** The lowest rank that renumbered rank {@code v} stands for ({@code v = p}: the world size). */
        int firstRank(final int v)
        {
            return v < rem ? 2 * v : v + rem;
        }
    }
}
