package dev.hccl.transport.shm;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The CRC32C of ranges of one ring's memory, under {@code HCCL_CHECKSUM}: the sender's of each DATA chunk it has just
 * copied into the ring, the receiver's of each chunk before its sink reads it (see {@link ShmRecords}). One per end of
 * a ring, used by one thread at a time (the sender's under its link's lock, the receiver's on the driving thread).
 */
final class ShmChecksum
{
    private final CRC32C crc = new CRC32C();
    /** A view of the ring's memory, moved to each range: direct, so the JDK's CRC32C intrinsic reads it in place. */
    private final ByteBuffer view;

    /**
     * A checksum over a ring's memory.
     *
     * @param region the ring's memory, indexed as the ring's buffer is; not changed.
     */
    ShmChecksum(final ByteBuffer region)
    {
        this.view = region.duplicate();
    }

    /**
     * The CRC32C of a range of the ring.
     *
     * @param index  the range's first byte, an index of the ring's buffer.
     * @param length its bytes.
     * @return the CRC, its 32 bits as an int.
     */
    int of(final int index, final int length)
    {
        view.clear().position(index).limit(index + length);
        crc.reset();
        crc.update(view);
        return (int)crc.getValue();
    }
}
