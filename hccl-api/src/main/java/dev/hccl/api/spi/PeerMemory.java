package dev.hccl.api.spi;

import java.nio.ByteBuffer;

/**
 * The ordinary memory of the other members of a node arena, read across processes with one copy, as Open MPI's CMA
 * ({@code process_vm_readv}) does: a member posts where its data lies in its own process ({@link #address}) and the
 * others copy it out from there ({@link #read}), so that an application's ordinary direct buffer needs no
 * registration ({@link RegisteredMemory}) to be read in place.
 * <p>
 * An arena offers it ({@link NodeArena#peerMemory()}) only when every member found that it can read every other's
 * memory, so that every member may post in its own memory and be read. The member whose memory is read must keep the
 * bytes unchanged and the buffer reachable until the readers are done with the step.
 * <p>
 * One operation at a time, as the arena's: {@link #staging()} is the calling operation's until it returns.
 */
public interface PeerMemory
{
    /**
     * Where a byte of this member's buffer lies in its process, for the others to read.
     *
     * @param buffer a buffer of this member.
     * @param index  the byte's absolute index.
     * @return its address, more than 0; 0 when the buffer is not direct (no other member can read it).
     */
    long address(ByteBuffer buffer, int index);

    /**
     * Copies bytes of another member's process into a buffer of this one.
     *
     * @param member  the member whose memory is read, not this one.
     * @param address where the bytes start in its process, as its {@link #address} said.
     * @param into    a buffer of this process: direct, or the bytes pass through {@link #staging()}.
     * @param index   where they go, absolute.
     * @param length  how many.
     * @throws dev.hccl.api.HcclException when the kernel does not copy them all: the member is gone
     *                                    ({@code E_REMOTE}) or the address is not its ({@code E_INTERNAL}).
     */
    void read(int member, long address, ByteBuffer into, int index, int length);

    /**
     * A direct buffer of this member's to read peers' bytes into before reducing them: small enough to stay in the
     * core's cache between the read and the reduction.
     *
     * @return the buffer, native order, of {@link #stagingBytes()}; its contents are whatever the last user left.
     */
    ByteBuffer staging();

    /**
     * @return the bytes of {@link #staging()}, a multiple of 64.
     */
    int stagingBytes();
}
