package dev.hccl.api.spi;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Memory that the ranks of one node all map, one region per rank, so that a collective within the node reads its
 * peers' data in place instead of passing it along point-to-point channels, as Open MPI's {@code coll/xhc} and
 * DeepSpeed's shared-memory all-reduce do. A transport that reaches its peers through shared memory offers one
 * ({@link Transport#nodeArena()}); an algorithm reaches it through {@link PeerGroup#arena()}, never by the
 * transport's name.
 * <p>
 * <b>Memory.</b> {@link #memory()} holds {@link #members()} regions of {@link #regionBytes()} each, member
 * {@code m}'s from byte {@code m * regionBytes()}; every byte is zero when the arena is made, and the arena belongs to
 * one communicator, whose operations run one at a time, so its protocol may keep state in the memory from one
 * operation to the next. What lies in the regions is the algorithms' protocol, not the transport's.
 * <p>
 * <b>Signals.</b> A long at an 8-byte-aligned index is a signal: {@link #signal(int, long)} publishes it with release
 * semantics, so that every write before it is seen by a member that reads the new value with {@link #signal(int)}
 * (acquire); {@link PeerGroup#awaitSignal} waits for one. Each signal has a single writer.
 * <p>
 * <b>Access.</b> Every access to the memory happens between {@link #enter()} and {@link #exit()}: the transport
 * unmaps the memory at close only once no thread is inside, as touching unmapped memory would crash the JVM.
 */
public interface NodeArena
{
    /**
     * Ranks that share the arena.
     *
     * @return at least 1.
     */
    int members();

    /**
     * This rank's index among the members.
     *
     * @return 0 to {@link #members()} - 1.
     */
    int member();

    /**
     * The rank a member is, in the group that offers the arena ({@link PeerGroup#arena()}: the group's rank; a
     * transport's arena: the root communicator's rank). Members are in ascending order of rank.
     *
     * @param member 0 to {@link #members()} - 1.
     * @return the rank.
     */
    int rankOf(int member);

    /**
     * Bytes of each member's region: a multiple of 4,096.
     *
     * @return the size.
     */
    int regionBytes();

    /**
     * All the regions, shared by every member: a direct buffer in native byte order, from byte 0. Its position and
     * limit are never to be changed; callers take slices or absolute accesses.
     *
     * @return the memory.
     */
    ByteBuffer memory();

    /**
     * Makes the calling thread one that may touch the memory.
     *
     * @return true when it may, and must then call {@link #exit()}; false once the arena is closing.
     */
    boolean enter();

    /**
     * Ends an access that {@link #enter()} allowed.
     */
    void exit();

    /**
     * The registered buffers of the members, read in place by the algorithms.
     *
     * @return them, or null when this arena offers none.
     */
    RegisteredMemory registeredMemory();

    /**
     * The other members' ordinary memory, read across processes ({@code HCCL_CMA}), so that an algorithm may post
     * where an ordinary direct buffer lies instead of copying it into its region.
     *
     * @return it, or null when some member cannot read another's (a JDK before 22, the kernel refusing, the setting
     *         off): every member sees the same.
     */
    default PeerMemory peerMemory()
    {
        return null;
    }

    /**
     * This process's notes of how far each member has come: per member, a step it is known to have finished reading
     * in (its {@code DONE} signal at least), learnt from a signal read earlier, as a member that posted step {@code k}
     * had finished step {@code k - 1}. An algorithm skips a wait that a note covers, which would read a line the
     * member's core has just written, as Agrona's ring buffers cache the consumer's position instead of reading it
     * each time. In this process's memory, not the arena's, so that no other process can change them; 0 at first;
     * touched only by the operation inside the arena ({@link #enter()}), one at a time.
     *
     * @return the notes, one per member; or null when this arena keeps none (every wait reads the signal).
     */
    default long[] finishedSteps()
    {
        return null;
    }

    /**
     * Where the algorithms keep their bookkeeping of this arena's steps between operations, so that an operation
     * allocates none: null inside at first. Whoever takes what it holds ({@code getAndSet(null)}) has it to itself
     * until it puts it back; a thread that finds it empty makes its own. In this process's memory.
     *
     * @return the slot; or null when this arena keeps none (each operation makes its own).
     */
    default AtomicReference<Object> spareSteps()
    {
        return null;
    }

    /**
     * Marks the arena failed, before this member's peers are told why over their links: a member that goes on to
     * read this one's data would otherwise complete an operation that failed here, with what it had posted. The
     * first member to mark it stands (when two mark it at once, either may); a mark is never taken back. Nothing
     * happens once the arena is closing, nor when its memory is damaged ({@link #damage()}): the links tell.
     */
    void markFailed();

    /**
     * What is wrong with the arena's memory itself, when an access to it failed: a file truncated under the mapping,
     * say, whose pages fault. The communicator reports the failed operation as {@code E_SHM_SEGMENT} with these words,
     * not as an internal error.
     *
     * @return what is wrong and what to change, or null when the memory is sound (or the arena cannot tell).
     */
    default String damage()
    {
        return null;
    }

    /**
     * Whether operations cover what each member reads of the others' data with a CRC32C, and check it before they use
     * it ({@code HCCL_CHECKSUM}, which every member sets alike).
     *
     * @return true to cover it.
     */
    default boolean checksummed()
    {
        return false;
    }

    /**
     * The words of an error for memory of the arena that holds what no member can have written: what is wrong, where
     * the memory lies, and what to change.
     *
     * @param what what is wrong, naming the member.
     * @return the message.
     */
    default String corrupted(final String what)
    {
        return "the node arena is corrupted: " + what;
    }

    /**
     * Which member marked the arena failed ({@link #markFailed()}), with acquire semantics: a wait on a signal looks at
     * this too, so that an operation on a failed arena fails instead of completing.
     *
     * @return the member, or -1 while none has.
     */
    int failedMember();

    /**
     * Reads a signal, with acquire semantics.
     *
     * @param index the signal's byte index in {@link #memory()}, a multiple of 8.
     * @return its value.
     */
    default long signal(final int index)
    {
        return (long)ArenaSignals.LONGS.getAcquire(memory(), index);
    }

    /**
     * Publishes a signal, with release semantics; only its one writer calls this.
     *
     * @param index the signal's byte index in {@link #memory()}, a multiple of 8.
     * @param value the new value.
     */
    default void signal(final int index, final long value)
    {
        ArenaSignals.LONGS.setRelease(memory(), index, value);
    }
}
