package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;

import java.nio.ByteBuffer;

/**
 * The hierarchical algorithms' level 0, the steps among the ranks of one node: in the node arena when they share one
 * ({@link ArenaAlgorithm#spanning}), else the message-passing schedules (the ring's in-place reduce-scatter and
 * all-gather, the binomial tree's reduce and broadcast). Every rank of a node sees the same arena or none, so all take
 * the same path.
 * <p>
 * The in-place forms work on a {@link Partition} of one buffer, chunk {@code r} being rank {@code r}'s: each arena step
 * carries the same piece of every chunk. Reduce-scatter: every rank copies in its pieces of the others' chunks and
 * reduces the others' copies of its own chunk's piece into its buffer, from its own value on in rank order (each
 * element reduced by one rank in one order). All-gather: every rank copies in its own chunk's piece and copies the
 * others' out. A rank whose buffer is registered ({@code Communicator.allocateRegistered}) copies nothing in: it
 * posts where its pieces lie and the others read them there ({@link ArenaSteps}, "In place"); before the step
 * returns it waits until they are done, so that the next level may write the buffer.
 */
final class NodeLevel
{
    private static final BinomialTreeAlgorithm TREE = new BinomialTreeAlgorithm();
    private static final ArenaAlgorithm ARENA = new ArenaAlgorithm();

    private NodeLevel()
    {
    }

    /**
     * Reduce-scatter within {@code work}: afterwards chunk {@code rank} holds the reduction over all ranks.
     *
     * @param group   the node's ranks.
     * @param work    the buffer, every rank's data in it.
     * @param chunks  the chunks, one per rank.
     * @param reducer the kernel.
     */
    static void reduceScatterInPlace(
        final PeerGroup group, final ByteBuffer work, final Partition chunks, final Reducer reducer)
    {
        final NodeArena arena = ArenaAlgorithm.spanning(group);
        if (null == arena)
        {
            RingAlgorithm.reduceScatterInPlace(group, work, chunks, reducer);
            return;
        }
        try (ArenaSteps steps = ArenaSteps.enter(group, arena, Operation.REDUCE_SCATTER))
        {
            final ByteBuffer memory = arena.memory();
            final int n = group.size();
            final int me = group.rank();
            final int size = reducer.elementSize();
            final int per = Math.max(1, ArenaAlgorithm.pieceBytes(steps) / n / size);
            final int end = end(chunks, n, size);
            final boolean inPlace = ArenaAlgorithm.inPlaceSized(end);
            for (int first = 0; first < longest(chunks, n); first += per)
            {
                steps.begin().chunks(chunks, first, per, size);
                // A registered buffer is read where it lies, from this step's piece of the first chunk on.
                if (!(inPlace && steps.postedInPlace(work, first * size, end - first * size)))
                {
                    for (int c = 0; c < n; c++)
                    {
                        final int elements = piece(chunks, c, first, per);
                        if (c != me && elements > 0)
                        {
                            Copies.copy(memory, steps.data(me) + c * per * size, work,
                                chunks.chunkOffset(c) + first * size, elements * size);
                        }
                    }
                    steps.posted(work, first * size);
                }
                steps.awaitAllPosted();
                final int elements = piece(chunks, me, first, per);
                for (int k = 1; k < n && elements > 0; k++)
                {
                    final int m = (me + k) % n;
                    steps.reduce(m, steps.inPlace(m) ? chunks.chunkOffset(me) : me * per * size, reducer, work,
                        chunks.chunkOffset(me) + first * size, elements, size);
                }
                steps.done();
            }
            steps.finish();
        }
    }

    /**
     * All-gather within {@code work}: chunk {@code rank} must hold this rank's data; afterwards every chunk does.
     *
     * @param group  the node's ranks.
     * @param work   the buffer.
     * @param chunks the chunks, one per rank.
     * @param size   bytes per element.
     */
    static void allGatherInPlace(final PeerGroup group, final ByteBuffer work, final Partition chunks, final int size)
    {
        final NodeArena arena = ArenaAlgorithm.spanning(group);
        if (null == arena)
        {
            RingAlgorithm.allGatherInPlace(group, work, chunks);
            return;
        }
        try (ArenaSteps steps = ArenaSteps.enter(group, arena, Operation.ALL_GATHER))
        {
            final ByteBuffer memory = arena.memory();
            final int n = group.size();
            final int me = group.rank();
            final int per = Math.max(1, ArenaAlgorithm.pieceBytes(steps) / size);
            final boolean inPlace = ArenaAlgorithm.inPlaceSized(end(chunks, n, size));
            for (int first = 0; first < longest(chunks, n); first += per)
            {
                steps.begin().ownChunks(chunks, first, per, size);
                final int mine = piece(chunks, me, first, per);
                final int at = chunks.chunkOffset(me) + first * size;
                if (!(inPlace && mine > 0 && steps.postedInPlace(work, at, mine * size)))
                {
                    if (mine > 0)
                    {
                        Copies.copy(memory, steps.data(me), work, at, mine * size);
                    }
                    steps.posted(work, at);
                }
                steps.awaitAllPosted();
                for (int m = 0; m < n; m++)
                {
                    final int elements = piece(chunks, m, first, per);
                    if (m != me && elements > 0)
                    {
                        steps.copy(m, 0, work, chunks.chunkOffset(m) + first * size, elements * size);
                    }
                }
                steps.done();
            }
            steps.finish();
        }
    }

    /**
     * Reduce to {@code root}: in the arena, else up the binomial tree.
     *
     * @param group   the node's ranks.
     * @param send    input.
     * @param recv    output at the root.
     * @param count   elements.
     * @param type    element type.
     * @param reducer the kernel.
     * @param root    the receiver.
     */
    static void reduce(final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int count,
        final DataType type, final Reducer reducer, final int root)
    {
        if (null == ArenaAlgorithm.spanning(group))
        {
            TREE.reduce(group, send, recv, count, type, reducer, root);
        }
        else
        {
            ARENA.reduce(group, send, recv, count, type, reducer, root);
        }
    }

    /**
     * Broadcast from {@code root}: in the arena, else down the binomial tree.
     *
     * @param group the node's ranks.
     * @param buf   the data at the root, the destination elsewhere.
     * @param count elements.
     * @param type  element type.
     * @param root  the sender.
     */
    static void broadcast(
        final PeerGroup group, final ByteBuffer buf, final int count, final DataType type, final int root)
    {
        if (null == ArenaAlgorithm.spanning(group))
        {
            TREE.broadcast(group, buf, count, type, root);
        }
        else
        {
            ARENA.broadcast(group, buf, count, type, root);
        }
    }

    /** Elements of chunk {@code c} from {@code first}, at most {@code per}. */
    static int piece(final Partition chunks, final int c, final int first, final int per)
    {
        return Math.max(0, Math.min(per, chunks.chunkElements(c) - first));
    }

    /** Bytes from the first chunk's start to the last one's end. */
    private static int end(final Partition chunks, final int n, final int size)
    {
        return chunks.chunkOffset(n - 1) + chunks.chunkElements(n - 1) * size;
    }

    private static int longest(final Partition chunks, final int n)
    {
        int longest = 0;
        for (int c = 0; c < n; c++)
        {
            longest = Math.max(longest, chunks.chunkElements(c));
        }
        return longest;
    }
}
