package dev.hccl.algorithms;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.DescriptorCodec;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerGroup;

import java.nio.ByteBuffer;

/**
 * The node arena's protocol: how its regions are laid out and how the members take steps through them together.
 * <p>
 * <b>Layout.</b> Each member's region starts with three signals, each on a cache line of its own and written by that
 * member alone: {@code POSTED} (the last step whose data it has written into its region), {@code REDUCED} (the last
 * step whose slice it has reduced in place) and {@code DONE} (the last step in which it finished reading the others'
 * regions). Then the operation of each step parity, as its member issued it (its codes and root, its count), written
 * before {@code POSTED}: a member that reads another's {@code POSTED} compares that operation with its own, so that
 * ranks that issued different operations fail ({@link PeerGroup#mismatch}) instead of mixing their data, as the
 * mailbox's fingerprints do for messages. Two data halves follow; step {@code k} uses half {@code k & 1} of every
 * region.
 * <p>
 * <b>Steps.</b> Every member takes the same steps, numbered from 1 for the arena's life: a collective takes as many
 * as its size needs, the same on every member, and a member keeps its count in its own {@code DONE} signal, so that
 * nothing but the memory carries it from one operation to the next. Before writing its half in step {@code k} a member
 * waits until every member's {@code DONE} reached {@code k - 2}, the last step that read that half: consecutive steps,
 * and so consecutive operations, need no barrier, and a member runs at most one step ahead of the slowest (double
 * buffering). Signals only grow, and a member waits for a value, never for a change, so a wait cannot miss one.
 * <p>
 * Not thread-safe: one per operation, on the operation's thread, made by {@link #enter} and closed when the
 * operation is done with the arena.
 */
final class ArenaSteps implements AutoCloseable
{
    /** Bytes of one cache line, which each signal has to itself. */
    static final int LINE = 64;
    /** The signals' offsets within a member's region. */
    static final int POSTED = 0;
    static final int REDUCED = LINE;
    static final int DONE = 2 * LINE;
    /** Where the operation of each step parity is written: its codes and root, then its count. */
    static final int OPERATION = 3 * LINE;
    /** Bytes before a region's first data half: the three signals and the operations, each on lines of their own. */
    static final int CONTROL_BYTES = 4 * LINE;

    private final PeerGroup group;
    private final NodeArena arena;
    private final int members;
    private final int me;
    private final int regionBytes;
    private final int halfBytes;
    /** The step being taken; 0 before {@link #begin()}. */
    private long step;
    /** This operation, as {@link #OPERATION} holds it: codes and root, count; null when not known. */
    private final OpDescriptor operation;
    private final long operationCodes;

    /**
     * Enters the arena for one operation's steps ({@link NodeArena#enter()}); {@link #close()} leaves it.
     *
     * @param group     the ranks: the arena's members.
     * @param arena     the arena.
     * @param operation the operation, named when the arena is closing.
     * @return the steps.
     * @throws HcclException {@link ErrorCode#E_UNAVAIL} once the arena is closing.
     */
    static ArenaSteps enter(final PeerGroup group, final NodeArena arena, final Operation operation)
    {
        if (!arena.enter())
        {
            throw new HcclException(ErrorCode.E_UNAVAIL, group.rank(), HcclException.UNKNOWN_RANK, operation,
                HcclException.NO_SEQUENCE, "the node arena is closed: the communicator is closing", null);
        }
        try
        {
            return new ArenaSteps(group, arena);
        }
        catch (final RuntimeException | Error ex)
        {
            arena.exit();
            throw ex;
        }
    }

    /**
     * Leaves the arena: no access to its memory follows.
     */
    @Override
    public void close()
    {
        arena.exit();
    }

    private ArenaSteps(final PeerGroup group, final NodeArena arena)
    {
        this.group = group;
        this.arena = arena;
        this.members = arena.members();
        this.me = arena.member();
        this.regionBytes = arena.regionBytes();
        this.halfBytes = halfBytes(regionBytes);
        this.step = arena.signal(signal(me, DONE));
        this.operation = group.operation();
        this.operationCodes = null == operation ? 0 : codes(operation);
    }

    private static long codes(final OpDescriptor desc)
    {
        return (long)DescriptorCodec.code(desc.operation()) << 48 | (long)DescriptorCodec.code(desc.dataType()) << 40 |
            (long)DescriptorCodec.code(desc.reduceOp()) << 32 | (desc.root() & 0xFFFF_FFFFL);
    }

    /**
     * Bytes of one data half of a region.
     *
     * @param regionBytes the region's bytes.
     * @return the half's, a multiple of {@link #LINE}.
     */
    static int halfBytes(final int regionBytes)
    {
        return ((regionBytes - CONTROL_BYTES) / 2) & -LINE;
    }

    /**
     * Bytes one step may put in a half.
     *
     * @return {@link #halfBytes(int)} of this arena.
     */
    int halfBytes()
    {
        return halfBytes;
    }

    /**
     * Starts the next step: waits until every member has finished reading the half this step writes.
     */
    void begin()
    {
        step++;
        awaitAll(DONE, step - 2);
    }

    /**
     * Where a member's half of this step starts in {@link NodeArena#memory()}.
     *
     * @param member a member.
     * @return the absolute byte index.
     */
    int data(final int member)
    {
        return member * regionBytes + CONTROL_BYTES + (int)(step & 1) * halfBytes;
    }

    /**
     * Says this member's half holds its data of this step.
     */
    void posted()
    {
        if (null != operation)
        {
            final ByteBuffer memory = arena.memory();
            final int at = operationAt(me);
            memory.putLong(at, operationCodes);
            memory.putLong(at + Long.BYTES, operation.count());
        }
        arena.signal(signal(me, POSTED), step);
    }

    /**
     * Says this member's slice of this step is reduced in its half.
     */
    void reduced()
    {
        arena.signal(signal(me, REDUCED), step);
    }

    /**
     * Says this member has read what it needed of the others' halves of this step.
     */
    void done()
    {
        arena.signal(signal(me, DONE), step);
    }

    /**
     * Waits until one member has posted this step.
     *
     * @param member the member.
     */
    void awaitPosted(final int member)
    {
        if (member != me)
        {
            group.awaitSignal(signal(member, POSTED), step, member);
            checkOperation(member);
        }
    }

    /**
     * Waits until every member has posted this step.
     */
    void awaitAllPosted()
    {
        for (int m = 0; m < members; m++)
        {
            awaitPosted(m);
        }
    }

    /** Whether a member that posted this step did so in this operation; fails the operation if not. */
    private void checkOperation(final int member)
    {
        if (null == operation)
        {
            return;
        }
        final ByteBuffer memory = arena.memory();
        final int at = operationAt(member);
        final long codes = memory.getLong(at);
        final long count = memory.getLong(at + Long.BYTES);
        if (codes != operationCodes || count != operation.count())
        {
            throw group.mismatch(member, new DescriptorCodec().decode((int)(codes >>> 48) & 0xFF,
                (int)(codes >>> 40) & 0xFF, (int)(codes >>> 32) & 0xFF, (int)codes, count));
        }
    }

    /** Where a member's operation of this step's parity lies. */
    private int operationAt(final int member)
    {
        return member * regionBytes + OPERATION + (int)(step & 1) * 2 * Long.BYTES;
    }

    /**
     * Waits until every member has reduced its slice of this step.
     */
    void awaitAllReduced()
    {
        awaitAll(REDUCED, step);
    }

    private void awaitAll(final int signal, final long atLeast)
    {
        if (atLeast <= 0)
        {
            return;
        }
        for (int m = 0; m < members; m++)
        {
            if (m != me)
            {
                group.awaitSignal(signal(m, signal), atLeast, m);
            }
        }
    }

    private int signal(final int member, final int offset)
    {
        return member * regionBytes + offset;
    }

    /**
     * Where a member's slice of a piece of {@code elements} starts: the piece cut into {@code members} slices of
     * whole cache lines where it can, the first slices one line longer when they do not come out even.
     *
     * @param elements    the piece's elements.
     * @param elementSize bytes per element.
     * @param members     the slices.
     * @param member      which slice; {@code members} gives the piece's end.
     * @return the slice's first element.
     */
    static int sliceStart(final int elements, final int elementSize, final int members, final int member)
    {
        final int unit = Math.max(1, LINE / elementSize);
        final int units = (elements + unit - 1) / unit;
        final int start = (member * (units / members) + Math.min(member, units % members)) * unit;
        return Math.min(elements, start);
    }
}
