package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.BarrierAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceAlgorithm;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import dev.hccl.api.spi.Reducer;

import java.nio.ByteBuffer;

/**
 * The collectives of one node in its shared arena ({@link PeerGroup#arena()}), as DeepSpeed's shared-memory
 * all-reduce and Open MPI's {@code coll/xhc} run them: each rank writes its input once into its own region, reads
 * the others' regions in place, and signals with sequence numbers ({@link ArenaSteps}), so no byte passes through a
 * point-to-point channel and no message is matched.
 * <p>
 * <b>All-reduce</b>, per piece of at most {@link TuningTable#ARENA_PIECE_BYTES} (a step): every rank copies its piece
 * in and posts; then, up to {@link TuningTable#ARENA_ONE_ROUND_MAX_BYTES}, every rank reduces the whole piece from all
 * regions into its output in rank order (one round of signals); above it, rank {@code r} reduces slice {@code r} of
 * the piece, its own input's and the others' regions', straight into its output and puts the result in its region,
 * says so, and every rank copies the others' reduced slices out (two rounds, every byte reduced once; a rank copies
 * in all but its own slice, which only it reads). <b>Reduce</b> is the same with only the root copying out (the other
 * ranks reduce their slice in their region). <b>Reduce-scatter</b>:
 * every rank copies in its input's piece of every block, and reduces its own block's piece from all regions into its
 * output. <b>All-gather</b>: every rank copies its block's piece in, then every block's out. <b>Broadcast</b>: the root
 * copies in, the others say they arrived ({@link ArenaSteps#arrived}), and once all have, copy out. <b>Barrier</b>: a
 * step with no data.
 * <p>
 * Every rank waits in every step until every rank posted or arrived, and compares their operations with its own
 * (operation, type, reduction, root, count: what a message's fingerprint carries), so that ranks that issued different
 * collectives all fail before any returns, even those that would only have sent.
 * <p>
 * Each slice is reduced by one rank in one fixed order (rank order from 0, or from the slice's owner), then copied,
 * so every rank ends with the same bits, and the same from run to run.
 * <p>
 * <b>Registered buffers.</b> From {@link TuningTable#ARENA_IN_PLACE_MIN_BYTES} on, a rank whose input lies in a
 * registered buffer ({@link dev.hccl.api.spi.RegisteredMemory}) posts where it lies instead of copying it in, and an
 * all-reduce's reduced slice likewise: the others read them there ({@link ArenaSteps#postedInPlace}), and the rank
 * waits for them before it returns. Each rank decides for itself; the others read wherever its data lies.
 * <p>
 * <b>Ordinary buffers across processes.</b> Where the arena's members can read each other's memory
 * ({@link NodeArena#peerMemory()}: {@code process_vm_readv}, as Open MPI's CMA; {@code HCCL_CMA=1}), an ordinary
 * direct buffer is posted where it lies too, from the same size: the others copy it into their own process with one
 * copy, reducing it piece by piece through a buffer that stays in the core's cache, so the copy into the region and
 * the reduced slice's copy there are saved, as with a registered buffer.
 * <p>
 * Without an arena that spans the group (a group across nodes, a view of some ranks) every operation runs the message-passing algorithm it
 * falls back to ({@link RingAlgorithm}, {@link BinomialTreeAlgorithm}, {@link DisseminationBarrierAlgorithm}); every
 * rank of a group sees the same arena or none, so all take the same path.
 * <p>
 * <b>Cost</b>, for {@code m} bytes in {@code S} steps: a step's signals cost {@code sigma}, a fraction of a
 * message's latency ({@link TuningTable#ARENA_SIGNAL_ALPHA}: a cache line crossing cores, with no framing, matching or
 * ring), and a copy {@code beta/2} per byte, as a shared-memory link's {@code beta} prices two copies (into its ring
 * and out).
 * <ul>
 *     <li>all-reduce: {@code 2 S sigma + (2n-1)/n m beta/2 + (n-1)/n m gamma}, its copies counted: in, all but
 *     the rank's own slice; its reduced slice into its half; out, the others' slices; one round: {@code S sigma +
 *     m beta + (n-1) m gamma};</li>
 *     <li>reduce: as all-reduce; reduce-scatter ({@code m} the whole input): {@code S sigma + m beta/2 +
 *     (n-1)/n m gamma};</li>
 *     <li>all-gather ({@code m} the whole output): {@code S sigma + (m/n + m) beta/2};</li>
 *     <li>broadcast: {@code S sigma + m beta}; barrier: {@code sigma}.</li>
 * </ul>
 */
public final class ArenaAlgorithm implements AllReduceAlgorithm, ReduceScatterAlgorithm, AllGatherAlgorithm,
    BroadcastAlgorithm, ReduceAlgorithm, BarrierAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it. */
    public static final String NAME = "arena";

    private static final RingAlgorithm RING = new RingAlgorithm();
    private static final BinomialTreeAlgorithm TREE = new BinomialTreeAlgorithm();
    private static final DisseminationBarrierAlgorithm DISSEMINATION = new DisseminationBarrierAlgorithm();

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public boolean needsNodeArena()
    {
        return true;
    }

    @Override
    public void allReduce(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int count, final DataType type,
        final Reducer reducer)
    {
        final NodeArena arena = spanning(group);
        if (null == arena)
        {
            RING.allReduce(group, send, recv, count, type, reducer);
            return;
        }
        if (LocalCases.allReduceDone(group, send, recv, count, count * type.size()))
        {
            return;
        }
        try (ArenaSteps steps = ArenaSteps.enter(group, arena, Operation.ALL_REDUCE))
        {
            reduceInArena(steps, group, arena, send, recv, count, type.size(), reducer, -1);
        }
    }

    @Override
    public void reduce(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int count, final DataType type,
        final Reducer reducer, final int root)
    {
        final NodeArena arena = spanning(group);
        if (null == arena)
        {
            TREE.reduce(group, send, recv, count, type, reducer, root);
            return;
        }
        if (group.size() == 1 || count == 0)
        {
            if (send != recv && group.rank() == root)
            {
                Copies.copy(recv, 0, send, 0, count * type.size());
            }
            return;
        }
        try (ArenaSteps steps = ArenaSteps.enter(group, arena, Operation.REDUCE))
        {
            reduceInArena(steps, group, arena, send, recv, count, type.size(), reducer, root);
        }
    }

    /**
     * All-reduce ({@code root} -1) or reduce to {@code root}, piece by piece.
     */
    private static void reduceInArena(final ArenaSteps steps,
        final PeerGroup group, final NodeArena arena, final ByteBuffer send, final ByteBuffer recv, final int count,
        final int size, final Reducer reducer, final int root)
    {
        final ByteBuffer memory = arena.memory();
        final int n = group.size();
        final int me = group.rank();
        final int pieceElements = pieceBytes(steps) / size;
        final boolean oneRound = (long)count * size <= TuningTable.ARENA_ONE_ROUND_MAX_BYTES;
        final boolean inPlace = !oneRound && inPlaceSized((long)count * size);
        for (int first = 0; first < count; first += pieceElements)
        {
            final int elements = Math.min(pieceElements, count - first);
            final int bytes = elements * size;
            final int at = first * size;
            // This rank's slice of the piece, in bytes from the piece's start.
            final int from = ArenaReads.sliceStart(elements, size, n, me) * size;
            final int to = ArenaReads.sliceStart(elements, size, n, me + 1) * size;
            final ArenaReads reads = steps.begin();
            if (oneRound)
            {
                reads.whole(bytes);
            }
            else
            {
                reads.slices(elements, size, n);
            }
            if (!(inPlace && steps.postedWhereItLies(send, at, bytes)))
            {
                if (oneRound || (root >= 0 && root != me))
                {
                    Copies.copy(memory, steps.data(me), send, at, bytes);
                }
                else
                {
                    // The others read every slice of this rank's piece but its own, which it reduces from its input.
                    Copies.copy(memory, steps.data(me), send, at, from);
                    Copies.copy(memory, steps.data(me) + to, send, at + to, bytes - to);
                }
                steps.posted(send, at);
            }
            steps.awaitAllPosted();
            if (oneRound)
            {
                if (root < 0 || root == me)
                {
                    steps.copy(0, 0, recv, at, bytes);
                    for (int m = 1; m < n; m++)
                    {
                        steps.reduce(m, 0, reducer, recv, at, elements, size);
                    }
                }
                steps.done();
                continue;
            }
            if (root >= 0 && root != me)
            {
                // This rank's slice, reduced in its own half (where the root copies it from), from its own value on
                // in rank order; the first step reads its own value where it lies.
                final int half = steps.data(me) + from;
                for (int k = 1; k < n && to > from; k++)
                {
                    final boolean fromInput = k == 1 && steps.inPlace(me);
                    steps.reduce((me + k) % n, from, reducer, memory, half, fromInput ? send : memory,
                        fromInput ? at + from : half, (to - from) / size, size);
                }
                steps.reduced(memory, steps.data(me));
                steps.done();
                continue;
            }
            // This rank's slice, reduced straight into its output in the same order (the first step from its input,
            // so that an output apart from the input needs no copy first), then put where the others copy it from,
            // unless they can read it there.
            for (int k = 1; k < n && to > from; k++)
            {
                steps.reduce((me + k) % n, from, reducer, recv, at + from, k == 1 ? send : recv, at + from,
                    (to - from) / size, size);
            }
            if (!(inPlace && root < 0 && steps.reducedInPlace(recv, at, bytes)))
            {
                Copies.copy(memory, steps.data(me) + from, recv, at + from, to - from);
                steps.reduced(recv, at);
            }
            steps.awaitAllReduced();
            copyReducedOut(steps, recv, at, elements, size, n, me);
            steps.done();
        }
        steps.finish();
    }

    /** Copies every other member's reduced slice of a piece into the output. */
    private static void copyReducedOut(final ArenaSteps steps,
        final ByteBuffer recv, final int at, final int elements, final int size, final int n, final int me)
    {
        for (int m = 0; m < n; m++)
        {
            if (m != me)
            {
                final int start = ArenaReads.sliceStart(elements, size, n, m) * size;
                final int end = ArenaReads.sliceStart(elements, size, n, m + 1) * size;
                steps.copyReduced(m, start, recv, at + start, end - start);
            }
        }
    }

    @Override
    public void reduceScatter(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int recvCount, final DataType type,
        final Reducer reducer)
    {
        final NodeArena arena = spanning(group);
        if (null == arena)
        {
            RING.reduceScatter(group, send, recv, recvCount, type, reducer);
            return;
        }
        if (LocalCases.reduceScatterDone(group, send, recv, recvCount, type))
        {
            return;
        }
        try (ArenaSteps steps = ArenaSteps.enter(group, arena, Operation.REDUCE_SCATTER))
        {
            final ByteBuffer memory = arena.memory();
            final int n = group.size();
            final int me = group.rank();
            final int size = type.size();
            final int blockBytes = recvCount * size;
            // A step carries the same piece of every block.
            final int pieceElements = Math.max(1, pieceBytes(steps) / n / size);
            final boolean inPlace = inPlaceSized((long)blockBytes * n);
            for (int first = 0; first < recvCount; first += pieceElements)
            {
                final int elements = Math.min(pieceElements, recvCount - first);
                final int bytes = elements * size;
                steps.begin().blocks(bytes, blockBytes);
                if (!(inPlace && steps.postedWhereItLies(send, first * size, (n - 1) * blockBytes + bytes)))
                {
                    for (int b = 0; b < n; b++)
                    {
                        Copies.copy(memory, steps.data(me) + b * bytes, send, b * blockBytes + first * size, bytes);
                    }
                    steps.posted(send, first * size);
                }
                steps.awaitAllPosted();
                // This rank's block of each member's piece: blocks lie a block apart in place, a piece apart in a half.
                steps.copy(0, me * (steps.inPlace(0) ? blockBytes : bytes), recv, first * size, bytes);
                for (int m = 1; m < n; m++)
                {
                    steps.reduce(m, me * (steps.inPlace(m) ? blockBytes : bytes), reducer, recv, first * size,
                        elements, size);
                }
                steps.done();
            }
            steps.finish();
        }
    }

    @Override
    public void allGather(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int sendCount, final DataType type)
    {
        final NodeArena arena = spanning(group);
        if (null == arena)
        {
            RING.allGather(group, send, recv, sendCount, type);
            return;
        }
        if (LocalCases.allGatherDone(group, send, recv, sendCount, type))
        {
            return;
        }
        try (ArenaSteps steps = ArenaSteps.enter(group, arena, Operation.ALL_GATHER))
        {
            final ByteBuffer memory = arena.memory();
            final int n = group.size();
            final int me = group.rank();
            final int size = type.size();
            final int blockBytes = sendCount * size;
            final int pieceElements = pieceBytes(steps) / size;
            final boolean inPlace = inPlaceSized(blockBytes);
            for (int first = 0; first < sendCount; first += pieceElements)
            {
                final int bytes = Math.min(pieceElements, sendCount - first) * size;
                final int at = first * size;
                steps.begin().whole(bytes);
                if (!(inPlace && steps.postedWhereItLies(send, at, bytes)))
                {
                    Copies.copy(memory, steps.data(me), send, at, bytes);
                    steps.posted(send, at);
                }
                steps.awaitAllPosted();
                for (int m = 0; m < n; m++)
                {
                    steps.copy(m, 0, recv, m * blockBytes + at, bytes);
                }
                steps.done();
            }
            steps.finish();
        }
    }

    @Override
    public void broadcast(
        final PeerGroup group, final ByteBuffer buf, final int count, final DataType type, final int root)
    {
        final NodeArena arena = spanning(group);
        if (null == arena)
        {
            RING.broadcast(group, buf, count, type, root);
            return;
        }
        if (group.size() == 1 || count == 0)
        {
            return;
        }
        try (ArenaSteps steps = ArenaSteps.enter(group, arena, Operation.BROADCAST))
        {
            final ByteBuffer memory = arena.memory();
            final int me = group.rank();
            final int size = type.size();
            final int pieceElements = pieceBytes(steps) / size;
            final boolean inPlace = inPlaceSized((long)count * size);
            for (int first = 0; first < count; first += pieceElements)
            {
                final int bytes = Math.min(pieceElements, count - first) * size;
                final int at = first * size;
                steps.begin().root(root, bytes);
                if (me != root)
                {
                    steps.arrived();
                }
                else if (!(inPlace && steps.postedWhereItLies(buf, at, bytes)))
                {
                    Copies.copy(memory, steps.data(me), buf, at, bytes);
                    steps.posted(buf, at);
                }
                // Every rank compares every other's operation, the root's included, before it returns: a rank that
                // names another root posts and reads where no one looks, and nothing else would tell.
                steps.awaitAllPosted();
                if (me != root)
                {
                    steps.copy(root, 0, buf, at, bytes);
                }
                steps.done();
            }
            steps.finish();
        }
    }

    @Override
    public void barrier(final PeerGroup group)
    {
        final NodeArena arena = spanning(group);
        if (null == arena)
        {
            DISSEMINATION.barrier(group);
            return;
        }
        if (group.size() == 1)
        {
            return;
        }
        try (ArenaSteps steps = ArenaSteps.enter(group, arena, Operation.BARRIER))
        {
            steps.begin();
            steps.arrived();
            steps.awaitAllPosted();
            steps.done();
        }
    }

    /**
     * The group's arena when it spans the whole group, its members being the group's ranks in order (member
     * {@code m} is rank {@code m}); else null.
     *
     * @param group the ranks.
     * @return the arena, or null.
     */
    static NodeArena spanning(final PeerGroup group)
    {
        final NodeArena arena = group.arena();
        return null != arena && arena.members() == group.size() ? arena : null;
    }

    /**
     * Whether an operation of this many bytes is worth posting in place when its buffer is registered: below
     * {@link TuningTable#ARENA_IN_PLACE_MIN_BYTES} the wait at its end ({@link ArenaSteps#finish()}) costs more than
     * the copy it saves.
     */
    static boolean inPlaceSized(final long bytes)
    {
        return bytes >= TuningTable.ARENA_IN_PLACE_MIN_BYTES;
    }

    /** The bytes of one step's piece: the arena's half, up to the tuning table's piece size. */
    static int pieceBytes(final ArenaSteps steps)
    {
        return (int)Math.min(steps.halfBytes(), TuningTable.ARENA_PIECE_BYTES);
    }

    /**
     * {@inheritDoc}
     * <p>
     * As the class comment says, with {@code S} the steps at {@link TuningTable#ARENA_PIECE_BYTES} each.
     */
    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        CostTerms.check(worldSize, bytes);
        final double sigma = TuningTable.ARENA_SIGNAL_ALPHA * cost.alpha();
        final double copy = cost.beta() / 2;
        final int n = worldSize;
        final double shared = (n - 1) / (double)n;
        switch (operation)
        {
            case ALL_REDUCE:
            case REDUCE:
                return bytes <= TuningTable.ARENA_ONE_ROUND_MAX_BYTES ?
                    steps(bytes) * sigma + bytes * 2 * copy + (n - 1) * bytes * cost.gamma() :
                    2 * steps(bytes) * sigma + (2 * n - 1) / (double)n * bytes * copy + shared * bytes * cost.gamma();
            case REDUCE_SCATTER:
                return steps(bytes) * sigma + bytes * copy + shared * bytes * cost.gamma();
            case ALL_GATHER:
                return steps(bytes) * sigma + (bytes / (double)n + bytes) * copy;
            case BROADCAST:
                return steps(bytes) * sigma + bytes * 2 * copy;
            case BARRIER:
                return sigma;
            default:
                throw CostTerms.unsupported(NAME, operation);
        }
    }

    private static long steps(final long bytes)
    {
        return Math.max(1, (bytes + TuningTable.ARENA_PIECE_BYTES - 1) / TuningTable.ARENA_PIECE_BYTES);
    }
}
