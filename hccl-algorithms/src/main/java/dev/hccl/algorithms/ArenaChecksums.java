package dev.hccl.algorithms;

import dev.hccl.api.CommConfig;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerGroup;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The node arena's CRC32Cs under {@code HCCL_CHECKSUM}, which every member sets alike: a member that posts a step's
 * data covers what each other member reads of it ({@link ArenaReads}), from the buffer it copied it from, and its
 * reduced slice; each reader checks the bytes it read once it has read them and before it says it is done with the
 * step, wherever they lie (a half or a registered buffer): until then no member writes them again. A mismatch fails the
 * operation ({@link ArenaDamage}) instead of computing with bytes another process changed.
 * <p>
 * <b>Layout</b>, at the end of each member's region and written by that member alone: for each step parity, the step
 * whose CRCs these are, its reduced slice's CRC, then one CRC per reader. The writer stores them before the signal that
 * publishes the step, so a reader that sees the signal sees them, and checks the step too: a signal raised by anyone
 * else would otherwise let it check stale data against stale CRCs.
 * <p>
 * Not thread-safe: one per {@link ArenaSteps}.
 */
final class ArenaChecksums
{
    private static final int STEP = 0;
    private static final int REDUCED = Long.BYTES;
    private static final int READERS = 2 * Long.BYTES;

    private final PeerGroup group;
    private final NodeArena arena;
    private final OpDescriptor operation;
    private final int members;
    private final int me;
    private final int regionBytes;
    private final int parityBytes;
    private final ByteBuffer memory;
    /** A view of the arena's memory moved to each range, so that a check of a half allocates nothing. */
    private final ByteBuffer memoryView;
    private final CRC32C crc = new CRC32C();

    /**
     * @param group     the ranks.
     * @param arena     the arena.
     * @param operation the operation, for errors; or null.
     */
    ArenaChecksums(final PeerGroup group, final NodeArena arena, final OpDescriptor operation)
    {
        this.group = group;
        this.arena = arena;
        this.operation = operation;
        this.members = arena.members();
        this.me = arena.member();
        this.regionBytes = arena.regionBytes();
        this.parityBytes = parityBytes(members);
        this.memory = arena.memory();
        this.memoryView = memory.duplicate();
    }

    /**
     * Bytes the CRCs take at the end of each region.
     *
     * @param members the arena's members.
     * @return whole cache lines.
     */
    static int bytes(final int members)
    {
        return 2 * parityBytes(members);
    }

    private static int parityBytes(final int members)
    {
        return (READERS + Integer.BYTES * members + ArenaSteps.LINE - 1) & -ArenaSteps.LINE;
    }

    /**
     * Covers this member's data of a step, before the signal that publishes it.
     *
     * @param step  the step.
     * @param data  the data, laid out as a buffer posted in place: this member's own buffer it was copied from, or
     *              the registered buffer posted; null for none.
     * @param index where it starts in {@code data}.
     * @param reads what each other member reads of it.
     */
    void signPosted(final long step, final ByteBuffer data, final int index, final ArenaReads reads)
    {
        final int at = at(me, step);
        int value = 0;
        boolean computed = false;
        for (int r = 0; r < members; r++)
        {
            final int length = reads.length(me, r);
            if ((r != me || reads.readsOwn()) && length > 0 && null != data)
            {
                if (!computed || !reads.same())
                {
                    value = crc(data, index + reads.start(true, r), length);
                    computed = true;
                }
                memory.putInt(at + READERS + r * Integer.BYTES, value);
            }
        }
        memory.putLong(at + STEP, step);
    }

    /**
     * Checks what this member read in a step, where the step's sources say it lay.
     *
     * @param step    the step.
     * @param sources where each member's data and reduced data lay.
     * @param reads   what each member reads.
     * @param posted  whether it read the members' posted data.
     * @param reduced whether it read their reduced slices.
     * @throws HcclException {@code E_SHM_SEGMENT} when the bytes or the CRC's step are not what a member wrote.
     */
    void checkRead(final long step, final ArenaSources sources, final ArenaReads reads, final boolean posted,
        final boolean reduced)
    {
        for (int m = 0; m < members && posted; m++)
        {
            // Its own data too where it read it back from its half: another process may change that as well.
            if (m != me || reads.readsOwn())
            {
                checkPosted(step, m, sources.source(m), sources.sourceAt(m), sources.inPlace(m), reads);
            }
        }
        for (int m = 0; m < members && reduced; m++)
        {
            if (m != me)
            {
                checkReduced(step, m, sources.reducedSource(m), sources.reducedAt(m), reads);
            }
        }
    }

    /**
     * Checks what this member read of another's data of a step (or of its own, read back from its half).
     *
     * @param step    the step, whose signal the member raised.
     * @param member  the member.
     * @param data    where its data lies.
     * @param index   where it starts in {@code data}.
     * @param inPlace whether it lies in a registered buffer.
     * @param reads   what each member reads of it.
     * @throws HcclException {@code E_SHM_SEGMENT} when the bytes or the CRC's step are not what the member wrote.
     */
    void checkPosted(final long step, final int member, final ByteBuffer data, final int index, final boolean inPlace,
        final ArenaReads reads)
    {
        final int length = reads.length(member, me);
        if (length > 0)
        {
            final int at = at(member, step);
            checkStep(at, step, member);
            check(memory.getInt(at + READERS + me * Integer.BYTES), data, index + reads.start(inPlace, me), length,
                step, member, "data");
        }
    }

    /**
     * Covers this member's reduced slice of a step, before the signal that says it is reduced.
     *
     * @param step  the step.
     * @param data  where the reduced piece lies.
     * @param index where the piece starts in {@code data}; the slice lies where {@code reads} says this member reads.
     * @param reads the step's slices.
     */
    void signReduced(final long step, final ByteBuffer data, final int index, final ArenaReads reads)
    {
        memory.putInt(at(me, step) + REDUCED, crc(data, index + reads.start(false, me), reads.length(me, me)));
    }

    /**
     * Checks another member's reduced slice of a step, which this member copied.
     *
     * @param step   the step.
     * @param member the member.
     * @param data   where its reduced piece lies.
     * @param index  where the piece starts in {@code data}.
     * @param reads  the step's slices.
     */
    void checkReduced(final long step, final int member, final ByteBuffer data, final int index,
        final ArenaReads reads)
    {
        final int at = at(member, step);
        checkStep(at, step, member);
        check(memory.getInt(at + REDUCED), data, index + reads.start(false, member), reads.length(member, member),
            step, member, "reduced slice");
    }

    private void checkStep(final int at, final long step, final int member)
    {
        final long signed = memory.getLong(at + STEP);
        if (signed != step)
        {
            throw ArenaDamage.corrupted(group, arena, operation, member, "rank " + arena.rankOf(member) + "'s " +
                "signal says it wrote its data of step " + step + ", but its CRC32Cs (" + CommConfig.CHECKSUM +
                ") are of step " + signed + ": the signal was raised by another process");
        }
    }

    private void check(final int expected, final ByteBuffer data, final int index, final int length, final long step,
        final int member, final String what)
    {
        final int actual = crc(data, index, length);
        if (actual != expected)
        {
            throw ArenaDamage.corrupted(group, arena, operation, member, "rank " + arena.rankOf(member) + "'s " +
                what + " of step " + step + " (" + length + " bytes this rank reads" + (data == memory ? " at byte " +
                index + " of the arena" : " in its registered buffer") + ") does not match the CRC32C rank " +
                arena.rankOf(member) + " wrote with it (" + CommConfig.CHECKSUM + "), so the bytes changed after " +
                "it wrote them");
        }
    }

    /** Where a member's CRCs of a step's parity lie in the arena's memory. */
    private int at(final int member, final long step)
    {
        return (member + 1) * regionBytes - 2 * parityBytes + (int)(step & 1) * parityBytes;
    }

    private int crc(final ByteBuffer data, final int index, final int length)
    {
        // Direct, so the JDK's CRC32C intrinsic reads it in place; another buffer than the arena's gets a view of its
        // own, as its position is its owner's.
        final ByteBuffer view = data == memory ? memoryView.clear() : data.duplicate();
        crc.reset();
        crc.update(view.limit(index + length).position(index));
        return (int)crc.getValue();
    }
}
