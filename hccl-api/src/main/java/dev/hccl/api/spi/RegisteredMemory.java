package dev.hccl.api.spi;

import java.nio.ByteBuffer;

/**
 * Buffers of one member of a node arena that every other member maps too: registered buffers, as NCCL's
 * {@code ncclMemAlloc} with a window registered on the communicator. An algorithm reads a peer's registered input in
 * place instead of the copy the peer would otherwise make into its region, and a peer's registered output likewise.
 * <p>
 * <b>Registration is collective</b> among the members, driven by the communicator in the same order on every rank:
 * each member {@link #create}s its memory of the next registration; once every member has, each
 * {@link #mapPeers}; once every member has mapped the others', each {@link #conclude}s it, which removes every trace
 * from the file system. Registrations are numbered from 0 in that order, the same on every member.
 * <p>
 * A member's own memory belongs to the application once handed out and is freed when it is unreachable; the peers'
 * memory as mapped here is released when the arena closes. Thread-safe.
 */
public interface RegisteredMemory
{
    /**
     * Makes this member's memory of the next registration.
     *
     * @param bytes its size, more than 0.
     * @return a direct buffer in native byte order of {@code bytes} zeros, or null when it cannot be made (the reason
     *         is logged, naming what to change).
     */
    ByteBuffer create(int bytes);

    /**
     * Maps the other members' memory of the registration created last, which each of them made with {@code bytes}.
     *
     * @param bytes the size.
     * @return false when one cannot be mapped (the reason is logged).
     */
    boolean mapPeers(int bytes);

    /**
     * Ends the registration created last, once every member has mapped the others' memory ({@code complete}), or
     * abandons it, when a member could not create or map: its memory is then never read in place.
     *
     * @param complete whether every member created and mapped.
     * @return whether the registration is complete here: this member's memory may be handed out; false when it was
     *         abandoned, or the arena closed meanwhile.
     */
    boolean conclude(boolean complete);

    /**
     * Where bytes of a buffer of this member lie in its complete registrations, so that another member can find
     * them ({@link #memory}).
     *
     * @param buffer a buffer; any buffer may be asked about.
     * @param index  the absolute index of the first byte.
     * @param length the bytes, all of which must lie in one registration.
     * @return {@code id << 32 | offset}: the registration and the offset in it; -1 when they do not lie in one.
     */
    long locate(ByteBuffer buffer, int index, int length);

    /**
     * A member's memory of a complete registration, as this member sees it: this member's own, or a peer's mapping.
     *
     * @param member a member of the arena.
     * @param id     the registration, as {@link #locate} gives it.
     * @return the memory from its byte 0, or null when there is no such complete registration.
     */
    ByteBuffer memory(int member, int id);
}
