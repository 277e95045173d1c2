package dev.hccl.algorithms;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Direct scratch buffers by slot, as {@link dev.hccl.api.spi.PeerGroup#scratch} hands them out: each grown on demand
 * (at least doubling, so a run of growing sizes allocates a few times only) and kept for the next operation. Not
 * thread-safe: one thread uses them at a time.
 */
public final class ScratchBuffers
{
    private final ByteBuffer[] slots;

    /**
     * @param slots how many slots.
     */
    public ScratchBuffers(final int slots)
    {
        this.slots = new ByteBuffer[slots];
    }

    /**
     * The buffer of a slot, with room for at least {@code bytes}.
     *
     * @param slot  0 to slots - 1.
     * @param bytes the size needed.
     * @return the slot's buffer, native order; its contents are whatever the last user left.
     */
    public ByteBuffer get(final int slot, final int bytes)
    {
        ByteBuffer buffer = slots[slot];
        if (buffer == null || buffer.capacity() < bytes)
        {
            final int capacity = (int)Math.min(Integer.MAX_VALUE - 8, Math.max(bytes, buffer == null ? 0 :
                2L * buffer.capacity()));
            buffer = ByteBuffer.allocateDirect(capacity).order(ByteOrder.nativeOrder());
            slots[slot] = buffer;
        }
        return buffer;
    }
}
