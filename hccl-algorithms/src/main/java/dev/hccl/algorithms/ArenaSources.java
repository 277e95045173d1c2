package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.PeerMemory;
import dev.hccl.api.spi.RegisteredMemory;
import dev.hccl.api.spi.Reducer;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Where each member's data of an arena step lies, and reading it from there ({@link ArenaSteps}' locations).
 * <p>
 * A member's data, and its reduced data, lies in one of three places, which a location (a long on its operation line)
 * names: its half of the arena ({@code 0}); a registered buffer that every member maps ({@code (id + 1) << 32 |
 * offset}, {@link RegisteredMemory}); or an ordinary direct buffer of its own process ({@link #ACROSS_PROCESSES} and
 * the address), which the others read with one copy across processes ({@link PeerMemory}). The first two are memory
 * this process maps, read with plain copies and reductions; the third is read into this process first, in pieces of
 * {@link PeerMemory#stagingBytes()} that stay in the core's cache for the reduction that follows.
 * <p>
 * Not thread-safe: one operation's at a time, as its steps, and kept with them.
 */
final class ArenaSources
{
    /** The flag of a location that is an address in its member's process. */
    private static final long ACROSS_PROCESSES = Long.MIN_VALUE;

    private PeerGroup group;
    private final NodeArena arena;
    private OpDescriptor operation;
    private RegisteredMemory registered;
    /** Whether the operations cover what they read with CRC32Cs: then nothing is read across processes. */
    private final boolean checksummed;
    /** The members' ordinary memory, or null when it cannot be read (or is not, as under the checksum). */
    private PeerMemory peers;
    /** Where each member's data of this step lies: a buffer this process maps and the index, or an address. */
    private final ByteBuffer[] source;
    private final int[] sourceAt;
    private final long[] sourceAddress;
    private final boolean[] inPlace;
    /** Where each member's reduced data of this step lies. */
    private final ByteBuffer[] reducedSource;
    private final int[] reducedAt;
    private final long[] reducedAddress;

    ArenaSources(final NodeArena arena, final boolean checksummed)
    {
        final int members = arena.members();
        this.arena = arena;
        this.checksummed = checksummed;
        this.source = new ByteBuffer[members];
        this.sourceAt = new int[members];
        this.sourceAddress = new long[members];
        this.inPlace = new boolean[members];
        this.reducedSource = new ByteBuffer[members];
        this.reducedAt = new int[members];
        this.reducedAddress = new long[members];
    }

    /**
     * Begins an operation's steps. No member's data is located yet: this is new, or was kept after
     * {@link #release()}, which forgot the last operation's locations.
     *
     * @param group     the operation's ranks.
     * @param operation the operation, or null when not known.
     */
    void start(final PeerGroup group, final OpDescriptor operation)
    {
        this.group = group;
        this.operation = operation;
        this.registered = arena.registeredMemory();
        // What is read across processes passes no arena memory that a CRC could cover; the others' memory becomes
        // readable once the members have agreed on it, after the arena was made.
        this.peers = checksummed ? null : arena.peerMemory();
    }

    /**
     * Forgets the operation and its buffers, so that a kept instance holds none of the application's memory.
     */
    void release()
    {
        group = null;
        operation = null;
        Arrays.fill(source, null);
        Arrays.fill(sourceAt, 0);
        Arrays.fill(sourceAddress, 0);
        Arrays.fill(inPlace, false);
        Arrays.fill(reducedSource, null);
        Arrays.fill(reducedAt, 0);
        Arrays.fill(reducedAddress, 0);
    }

    /**
     * @return whether this holds anything of an operation: its group, its operation, or a buffer (the application's
     * or the arena's) where a member's data lay.
     */
    boolean holdsAnOperation()
    {
        for (int m = 0; m < source.length; m++)
        {
            if (null != source[m] || null != reducedSource[m])
            {
                return true;
            }
        }
        return null != group || null != operation;
    }

    /**
     * The location of bytes of this member's buffer that the others can read where they lie.
     *
     * @param data             the buffer.
     * @param index            where the bytes start.
     * @param length           how many.
     * @param acrossProcesses  whether an ordinary direct buffer may be read across processes: only where every read
     *                         of the step goes through this class.
     * @return the location, or 0 when they must be copied into the half.
     */
    long locate(final ByteBuffer data, final int index, final int length, final boolean acrossProcesses)
    {
        final long where = null == registered ? -1 : registered.locate(data, index, length);
        if (where >= 0)
        {
            return where + (1L << 32);
        }
        final long address = acrossProcesses && null != peers ? peers.address(data, index) : 0;
        return 0 == address ? 0 : ACROSS_PROCESSES | address;
    }

    /**
     * Records where this member's own data of the step lies: it reads it from there itself.
     *
     * @param member   this member.
     * @param data     the buffer it posted or copied from.
     * @param index    where the step's data starts in it.
     * @param inPlace  whether the others read it there, laid out as there.
     */
    void own(final int member, final ByteBuffer data, final int index, final boolean inPlace)
    {
        source[member] = data;
        sourceAt[member] = index;
        sourceAddress[member] = 0;
        this.inPlace[member] = inPlace;
    }

    /**
     * Records where another member's data of the step lies, as its location says.
     *
     * @param member   the member.
     * @param location its location.
     * @param half     where its half of the step starts in the arena's memory.
     */
    void posted(final int member, final long location, final int half)
    {
        inPlace[member] = 0 != location;
        sourceAddress[member] = address(location);
        source[member] = resolve(member, location);
        sourceAt[member] = index(location, half);
    }

    /**
     * Records where another member's reduced data of the step lies.
     *
     * @param member   the member.
     * @param location its location.
     * @param half     where its half of the step starts in the arena's memory.
     */
    void reduced(final int member, final long location, final int half)
    {
        reducedAddress[member] = address(location);
        reducedSource[member] = resolve(member, location);
        reducedAt[member] = index(location, half);
    }

    /** The address in its member's process that a location names, or 0 for memory this process maps. */
    private static long address(final long location)
    {
        return location < 0 ? location & ~ACROSS_PROCESSES : 0;
    }

    /** Where the data starts in {@link #resolve}'s buffer: its half, the offset in a registration, or 0. */
    private static int index(final long location, final int half)
    {
        return 0 == location ? half : location < 0 ? 0 : (int)location;
    }

    /**
     * The buffer a location names: the arena's memory for 0, a member's registered buffer, or null for an address in
     * the member's process.
     */
    private ByteBuffer resolve(final int member, final long location)
    {
        if (location < 0)
        {
            return null;
        }
        if (0 == location)
        {
            return arena.memory();
        }
        final int id = (int)(location >>> 32) - 1;
        final ByteBuffer memory = null == registered ? null : registered.memory(member, id);
        if (null == memory)
        {
            throw new HcclException(ErrorCode.E_INTERNAL, group.rank(), arena.rankOf(member),
                null == operation ? null : operation.operation(), HcclException.NO_SEQUENCE, "rank " +
                arena.rankOf(member) + " posted data in its registered buffer " + id + ", which this rank has not " +
                "mapped", null);
        }
        return memory;
    }

    /**
     * Copies bytes of a member's data of the step.
     *
     * @param member the member.
     * @param offset bytes from where its data starts.
     * @param into   where to, in this process.
     * @param index  where in {@code into}.
     * @param length how many.
     */
    void copy(final int member, final int offset, final ByteBuffer into, final int index, final int length)
    {
        if (0 != sourceAddress[member])
        {
            peers.read(member, sourceAddress[member] + offset, into, index, length);
        }
        else
        {
            Copies.copy(into, index, source[member], sourceAt[member] + offset, length);
        }
    }

    /**
     * Copies bytes of a member's reduced data of the step.
     *
     * @param member another member.
     * @param offset bytes from where its reduced piece starts.
     * @param into   where to, in this process.
     * @param index  where in {@code into}.
     * @param length how many.
     */
    void copyReduced(final int member, final int offset, final ByteBuffer into, final int index, final int length)
    {
        if (0 != reducedAddress[member])
        {
            peers.read(member, reducedAddress[member] + offset, into, index, length);
        }
        else
        {
            Copies.copy(into, index, reducedSource[member], reducedAt[member] + offset, length);
        }
    }

    /**
     * Reduces elements of a member's data of the step into a buffer of this process: {@code into = left op data}, where
     * {@code left} is the accumulator itself ({@code into} at {@code index}) or a buffer apart from it, so that an
     * out-of-place first step needs no copy of the left operand first.
     *
     * @param member    the member.
     * @param offset    bytes from where its data starts.
     * @param reducer   the reduction.
     * @param into      the accumulator, in this process.
     * @param index     where in {@code into}.
     * @param left      the left operand: {@code into}, or a buffer apart from it.
     * @param leftIndex where in {@code left}.
     * @param elements  how many.
     * @param size      bytes per element.
     */
    void reduce(final int member, final int offset, final Reducer reducer, final ByteBuffer into, final int index,
        final ByteBuffer left, final int leftIndex, final int elements, final int size)
    {
        final long address = sourceAddress[member];
        if (0 == address)
        {
            reduce(reducer, into, index, left, leftIndex, source[member], sourceAt[member] + offset, elements);
            return;
        }
        final ByteBuffer staging = peers.staging();
        final int per = peers.stagingBytes() / size;
        for (int done = 0; done < elements; done += per)
        {
            final int count = Math.min(per, elements - done);
            peers.read(member, address + offset + (long)done * size, staging, 0, count * size);
            reduce(reducer, into, index + done * size, left, leftIndex + done * size, staging, 0, count);
        }
    }

    /** {@code into = left op right}, through the two-operand kernel where {@code left} is {@code into}'s range. */
    private static void reduce(final Reducer reducer, final ByteBuffer into, final int index, final ByteBuffer left,
        final int leftIndex, final ByteBuffer right, final int rightIndex, final int count)
    {
        if (left == into && leftIndex == index)
        {
            reducer.reduce(into, index, right, rightIndex, count);
        }
        else
        {
            reducer.reduce(into, index, left, leftIndex, right, rightIndex, count);
        }
    }

    /**
     * @param member a member.
     * @return the buffer its data lies in, when this process maps it: what a CRC check reads.
     */
    ByteBuffer source(final int member)
    {
        return source[member];
    }

    int sourceAt(final int member)
    {
        return sourceAt[member];
    }

    /**
     * @param member a member.
     * @return whether its data of the step lies in the buffer it was given, laid out as there, not in its half.
     */
    boolean inPlace(final int member)
    {
        return inPlace[member];
    }

    ByteBuffer reducedSource(final int member)
    {
        return reducedSource[member];
    }

    int reducedAt(final int member)
    {
        return reducedAt[member];
    }
}
