package dev.hccl.algorithms;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.RegisteredMemory;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

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
 * region. Under {@code HCCL_CHECKSUM} the region ends with the CRC32Cs of what the others read ({@link ArenaChecksums}).
 * A control line that holds what no member writes (a signal more than two steps ahead, codes of no operation) fails
 * the operation as corruption ({@link ArenaDamage}).
 * <p>
 * <b>In place.</b> A member whose data of a step lies in a registered buffer ({@link RegisteredMemory}), or in an
 * ordinary direct buffer that the others can read across processes ({@link dev.hccl.api.spi.PeerMemory}), posts where
 * it lies instead of copying it into its half, and likewise its reduced data: each parity's line holds both
 * locations, 0 for "in my half" ({@link ArenaSources}), written before the signal that publishes them. Readers read
 * every member's data through {@link #copy}, {@link #reduce} and {@link #copyReduced}, wherever it lies. The others
 * then read the application's buffer itself, so before the operation returns, the member waits until every member is
 * done with the step ({@link #finish()}); a half needs no such wait, as the next step that writes it waits already.
 * <p>
 * <b>Steps.</b> Every member takes the same steps, numbered from 1 for the arena's life: a collective takes as many
 * as its size needs, the same on every member, and a member keeps its count in its own {@code DONE} signal, so that
 * nothing but the memory carries it from one operation to the next. Before writing its half in step {@code k} a member
 * waits until every member's {@code DONE} reached {@code k - 2}, the last step that read that half: consecutive steps,
 * and so consecutive operations, need no barrier, and a member runs at most one step ahead of the slowest (double
 * buffering). Signals only grow, and a member waits for a value, never for a change, so a wait cannot miss one. A
 * member signals {@code POSTED} or {@code REDUCED} of step {@code k} only after its {@code DONE} of {@code k - 1}, so
 * whatever signal of a member was read last says how far it has come ({@link NodeArena#finishedSteps()}): a wait for
 * a {@code DONE} that it covers reads nothing (in the steady state of back-to-back operations, every one), where the
 * read would fetch a line the member's core has just written.
 * <p>
 * Not thread-safe: one operation's at a time, on the operation's thread, taken by {@link #enter} and closed when the
 * operation is done with the arena; then kept with the arena for the next ({@link NodeArena#spareSteps()}), every
 * field set again as a new one's, so that a steady run of operations allocates nothing here.
 */
final class ArenaSteps implements AutoCloseable
{
    /** Bytes of one cache line, which each signal has to itself. */
    static final int LINE = 64;
    /** The signals' offsets within a member's region. */
    static final int POSTED = 0;
    static final int REDUCED = LINE;
    static final int DONE = 2 * LINE;
    /**
     * Where the operation of each step parity is written: its codes and root, then its count; from
     * {@link #LOCATIONS} on, where its data and its reduced data lie.
     */
    static final int OPERATION = 3 * LINE;
    /** Bytes into the operation line where each parity's two locations start. */
    private static final int LOCATIONS = 32;
    /** Bytes before a region's first data half: the three signals and the operations, each on lines of their own. */
    static final int CONTROL_BYTES = 4 * LINE;

    private PeerGroup group;
    private final NodeArena arena;
    /** Where this is kept between operations ({@link NodeArena#spareSteps()}), or null. */
    private final AtomicReference<Object> spare;
    private final int members;
    private final int me;
    private final int regionBytes;
    private final int halfBytes;
    /** The step being taken: this member's {@code DONE} before {@link #begin()}. */
    private long step;
    /** This operation, as {@link #OPERATION} holds it: codes and root, count; null when not known. */
    private OpDescriptor operation;
    private long operationCodes;
    /**
     * Where each member's data and reduced data of this step lies, as {@link #awaitPosted} and
     * {@link #awaitAllReduced} found it (this member's: as it posted).
     */
    private final ArenaSources sources;
    /** Whether this member posted a buffer of the application in place in this operation. */
    private boolean exposed;
    /** Whether this step read the members' posted data, and their reduced slices: what {@link #done()} checks. */
    private boolean readPosted;
    private boolean readReduced;
    /** What each member reads of the others' data in this step, as the operation says ({@link #begin()}). */
    private final ArenaReads reads = new ArenaReads();
    /** The CRC32Cs of what each member reads ({@code HCCL_CHECKSUM}), or null without. */
    private final ArenaChecksums checksums;
    /** {@link NodeArena#finishedSteps()}: how far each member is known to have come, or null. */
    private final long[] finished;

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
            final AtomicReference<Object> spare = arena.spareSteps();
            final Object kept = null == spare ? null : spare.getAndSet(null);
            if (kept instanceof ArenaSteps steps && steps.arena == arena)
            {
                steps.start(group);
                return steps;
            }
            final ArenaSteps steps = new ArenaSteps(group, arena, spare);
            steps.start(group);
            return steps;
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
        if (null != spare)
        {
            // Kept for the next operation, holding nothing of this one's.
            group = null;
            operation = null;
            sources.release();
            spare.set(this);
        }
    }

    /**
     * @return whether this holds anything of an operation (its group, its operation, a buffer of its data): not once
     * closed.
     */
    boolean holdsAnOperation()
    {
        return null != group || null != operation || sources.holdsAnOperation();
    }

    private ArenaSteps(final PeerGroup group, final NodeArena arena, final AtomicReference<Object> spare)
    {
        this.arena = arena;
        this.members = arena.members();
        this.me = arena.member();
        this.regionBytes = arena.regionBytes();
        this.checksums = arena.checksummed() ? new ArenaChecksums(group, arena, group.operation()) : null;
        // The checksums name their operation: those steps are made for one operation and not kept.
        this.spare = null == checksums ? spare : null;
        this.halfBytes = halfBytes(regionBytes, null == checksums ? 0 : ArenaChecksums.bytes(members));
        this.sources = new ArenaSources(arena, null != checksums);
        this.finished = arena.finishedSteps();
    }

    /**
     * Sets every field of an operation's as a new one has it: the steps begin where this member's {@code DONE} says.
     */
    private void start(final PeerGroup group)
    {
        this.group = group;
        this.operation = group.operation();
        this.operationCodes = null == operation ? 0 : ArenaOperationLine.codes(operation);
        this.step = arena.signal(signal(me, DONE));
        this.exposed = false;
        this.readPosted = false;
        this.readReduced = false;
        reads.none();
        sources.start(group, operation);
    }

    /**
     * Bytes of one data half of a region.
     *
     * @param regionBytes the region's bytes.
     * @return the half's, a multiple of {@link #LINE}.
     */
    static int halfBytes(final int regionBytes, final int checksumBytes)
    {
        return ((regionBytes - CONTROL_BYTES - checksumBytes) / 2) & -LINE;
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
     *
     * @return what each member reads of the others' data in this step (nothing until the caller says), which the
     * caller says before it posts: under {@code HCCL_CHECKSUM} exactly that is covered and checked.
     */
    ArenaReads begin()
    {
        step++;
        awaitAll(DONE, step - 2);
        return reads.none();
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
     * Says this member's half holds its data of this step, copied from a buffer of its own.
     *
     * @param from  the buffer it was copied from, laid out there as a buffer posted in place would be.
     * @param index where the step's data starts in it.
     */
    void posted(final ByteBuffer from, final int index)
    {
        post(arena.memory(), data(me), 0, false, from, index);
    }

    /**
     * Says this member has begun this step with no data for the others (a broadcast's receiver, a barrier): it posts
     * only its operation, which the others compare with theirs.
     */
    void arrived()
    {
        post(arena.memory(), data(me), 0, false, null, 0);
    }

    /**
     * Says this member's data of this step lies in a registered buffer, when it does, instead of copying it into its
     * half: the others read it there.
     *
     * @param data   the buffer.
     * @param index  where the step's data starts in it.
     * @param length the bytes the others may read from {@code index}.
     * @return true when posted so; false when the data lies in no registered buffer (nothing is posted).
     */
    boolean postedInPlace(final ByteBuffer data, final int index, final int length)
    {
        return postedWhereItLies(data, index, length, false);
    }

    /**
     * Says this member's data of this step lies in a registered buffer, or in an ordinary direct buffer that the
     * others can read across processes ({@link dev.hccl.api.spi.PeerMemory}), instead of copying it into its half.
     * Only for steps whose every read of the others' data goes through {@link #copy}, {@link #reduce} and
     * {@link #copyReduced}.
     *
     * @param data   the buffer.
     * @param index  where the step's data starts in it.
     * @param length the bytes the others may read from {@code index}.
     * @return true when posted so; false when it must be copied into the half (nothing is posted).
     */
    boolean postedWhereItLies(final ByteBuffer data, final int index, final int length)
    {
        return postedWhereItLies(data, index, length, true);
    }

    private boolean postedWhereItLies(final ByteBuffer data, final int index, final int length,
        final boolean acrossProcesses)
    {
        final long location = sources.locate(data, index, length, acrossProcesses);
        if (0 == location)
        {
            return false;
        }
        exposed = true;
        post(data, index, location, true, data, index);
        return true;
    }

    /**
     * Publishes this member's data of the step, where it lies; under {@code HCCL_CHECKSUM} covered from where it was
     * copied from ({@code from}, laid out as in place), which no other process writes, so that a byte changed in the
     * half even while it is copied there does not go into the CRC.
     */
    private void post(final ByteBuffer data, final int index, final long location, final boolean registeredData,
        final ByteBuffer from, final int fromIndex)
    {
        final ByteBuffer memory = arena.memory();
        final int at = operationAt(me);
        if (null != operation)
        {
            memory.putLong(at, operationCodes);
            memory.putLong(at + Long.BYTES, operation.count());
        }
        memory.putLong(locationAt(me, 0), location);
        sources.own(me, data, index, registeredData);
        if (null != checksums)
        {
            checksums.signPosted(step, from, fromIndex, reads);
        }
        arena.signal(signal(me, POSTED), step);
    }

    /**
     * Says this member's slice of this step is reduced in its half, at the same place as in the piece.
     *
     * @param from  where the reduced piece was copied from (its own output), or its half itself.
     * @param index where the piece starts in {@code from}.
     */
    void reduced(final ByteBuffer from, final int index)
    {
        arena.memory().putLong(locationAt(me, 1), 0);
        if (null != checksums)
        {
            checksums.signReduced(step, from, index, reads);
        }
        arena.signal(signal(me, REDUCED), step);
    }

    /**
     * Says this member's slice of this step is reduced in a registered buffer, or an ordinary direct buffer the
     * others can read across processes, when it is, instead of copying it into its half.
     *
     * @param data   the buffer, holding the slice at the same place as in the piece.
     * @param index  where the step's piece starts in it.
     * @param length the piece's bytes.
     * @return true when said so; false when it must be copied into the half (nothing is said).
     */
    boolean reducedInPlace(final ByteBuffer data, final int index, final int length)
    {
        final long location = sources.locate(data, index, length, true);
        if (0 == location)
        {
            return false;
        }
        exposed = true;
        arena.memory().putLong(locationAt(me, 1), location);
        if (null != checksums)
        {
            checksums.signReduced(step, data, index, reads);
        }
        arena.signal(signal(me, REDUCED), step);
        return true;
    }

    /**
     * Copies bytes of a member's data of this step, once posted ({@link #awaitPosted}; this member's once it posted),
     * wherever it lies.
     *
     * @param member the member.
     * @param offset bytes from where its data of the step starts.
     * @param into   where to.
     * @param index  where in {@code into}.
     * @param length how many.
     */
    void copy(final int member, final int offset, final ByteBuffer into, final int index, final int length)
    {
        sources.copy(member, offset, into, index, length);
    }

    /**
     * Reduces elements of a member's data of this step into a buffer, once posted, wherever it lies.
     *
     * @param member   the member.
     * @param offset   bytes from where its data of the step starts.
     * @param reducer  the reduction.
     * @param into     the accumulator.
     * @param index    where in {@code into}.
     * @param elements how many.
     * @param size     bytes per element.
     */
    void reduce(final int member, final int offset, final Reducer reducer, final ByteBuffer into, final int index,
        final int elements, final int size)
    {
        sources.reduce(member, offset, reducer, into, index, into, index, elements, size);
    }

    /**
     * Reduces a buffer of this process and a member's data of this step into a third buffer, {@code into = left op
     * data}, once posted, wherever it lies.
     *
     * @param member    the member.
     * @param offset    bytes from where its data of the step starts.
     * @param reducer   the reduction.
     * @param into      the result.
     * @param index     where in {@code into}.
     * @param left      the left operand, {@code into} or apart from it.
     * @param leftIndex where in {@code left}.
     * @param elements  how many.
     * @param size      bytes per element.
     */
    void reduce(final int member, final int offset, final Reducer reducer, final ByteBuffer into, final int index,
        final ByteBuffer left, final int leftIndex, final int elements, final int size)
    {
        sources.reduce(member, offset, reducer, into, index, left, leftIndex, elements, size);
    }

    /**
     * Copies bytes of another member's reduced piece of this step, once reduced ({@link #awaitAllReduced}).
     *
     * @param member another member.
     * @param offset bytes from where its piece starts.
     * @param into   where to.
     * @param index  where in {@code into}.
     * @param length how many.
     */
    void copyReduced(final int member, final int offset, final ByteBuffer into, final int index, final int length)
    {
        sources.copyReduced(member, offset, into, index, length);
    }

    /**
     * @param member the member.
     * @return whether its data of this step lies in the buffer it was given, laid out as there, not in its half.
     */
    boolean inPlace(final int member)
    {
        return sources.inPlace(member);
    }

    /**
     * Ends the operation's steps: when this member posted a buffer of the application in place, waits until every
     * member is done with this step, so that the application may write the buffer once the operation returns.
     */
    void finish()
    {
        if (exposed)
        {
            awaitAll(DONE, step);
        }
    }

    /**
     * Says this member has read what it needed of the others' halves of this step. Under {@code HCCL_CHECKSUM} it
     * first checks what it read, after reading it: no member writes it again before this signal, so a byte changed
     * before or while it was read shows, where a check before the reading would miss one changed just after.
     *
     * @throws HcclException {@code E_SHM_SEGMENT} when what it read is not what its writers covered.
     */
    void done()
    {
        if (null != checksums)
        {
            checksums.checkRead(step, sources, reads, readPosted, readReduced);
        }
        readPosted = false;
        readReduced = false;
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
            await(member, POSTED, step);
            checkOperation(member);
            sources.posted(member, arena.memory().getLong(locationAt(member, 0)), data(member));
        }
    }

    /** Where a member's location of this step's parity lies: 0 its data, 1 its reduced data. */
    private int locationAt(final int member, final int which)
    {
        return member * regionBytes + OPERATION + LOCATIONS + (int)(step & 1) * 2 * Long.BYTES + which * Long.BYTES;
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
        readPosted = true;
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
        if (codes == operationCodes && count == operation.count())
        {
            return;
        }
        // Another operation than this rank's, or codes no rank writes: only then are they taken apart.
        throw ArenaOperationLine.differs(group, arena, operation, member, step, codes, count);
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
        readReduced = true;
        awaitAll(REDUCED, step);
        for (int m = 0; m < members; m++)
        {
            if (m != me)
            {
                sources.reduced(m, arena.memory().getLong(locationAt(m, 1)), data(m));
            }
        }
    }

    private void awaitAll(final int signal, final long atLeast)
    {
        if (atLeast <= 0)
        {
            return;
        }
        for (int m = 0; m < members; m++)
        {
            // A DONE that an earlier signal of the member implies needs no look at its line.
            if (m != me && !(signal == DONE && null != finished && finished[m] >= atLeast))
            {
                await(m, signal, atLeast);
            }
        }
    }

    /**
     * Waits until a member's signal reaches a value, and checks that it holds one the member can have written: a
     * member is at most two steps ahead of another (it waits for every member's {@code DONE} of two steps before),
     * and signals only grow.
     */
    private void await(final int member, final int signal, final long atLeast)
    {
        final int index = signal(member, signal);
        group.awaitSignal(index, atLeast, member);
        final long value = arena.signal(index);
        if (value > step + 2)
        {
            throw ArenaDamage.corrupted(group, arena, operation, member, "rank " + arena.rankOf(member) + "'s " +
                (signal == POSTED ? "POSTED" : signal == REDUCED ? "REDUCED" : "DONE") + " signal holds " + value +
                " while this rank takes step " + step + ": no rank runs more than two steps ahead, so no rank wrote " +
                "it");
        }
        // A member signals POSTED or REDUCED of a step only after its DONE of the step before.
        final long done = signal == DONE ? value : value - 1;
        if (null != finished && done > finished[member])
        {
            finished[member] = done;
        }
    }

    private int signal(final int member, final int offset)
    {
        return member * regionBytes + offset;
    }
}
