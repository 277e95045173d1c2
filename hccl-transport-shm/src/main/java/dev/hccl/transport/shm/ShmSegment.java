package dev.hccl.transport.shm;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * The memory one pair of ranks shares: a file in the shared-memory directory, mapped by both, holding two
 * single-producer single-consumer rings, the lower rank's to the higher ({@code lo→hi}) from byte 0 and the other
 * way after it. Each ring is {@code ringBytes} (a power of two) plus Agrona's trailer (positions and the consumer's
 * heartbeat).
 * <p>
 * The file lives only while the pair connects: the higher rank unlinks it once mapped, the lower once it knows;
 * the memory then lasts as long as a mapping does, and the kernel frees it when the last one goes, however the
 * processes end.
 * <p>
 * Ownership: the segment owns its mapping ({@link ShmFile}). {@link #unmap()} may be called only when no thread can
 * touch the memory again; a thread that does afterwards crashes the JVM.
 */
final class ShmSegment
{
    /** The smallest ring allowed. */
    static final int RING_BYTES_MIN = 4 * 1024;
    /** The largest ring allowed: two of them and their trailers must stay under 2 GiB, one mapping's limit. */
    static final int RING_BYTES_MAX = 512 * 1024 * 1024;

    private final ShmFile file;
    private final int ringBytes;
    private final ByteBuffer loToHiRegion;
    private final ByteBuffer hiToLoRegion;
    private final OneToOneRingBuffer loToHi;
    private final OneToOneRingBuffer hiToLo;

    private ShmSegment(final ShmFile file, final int ringBytes)
    {
        this.file = file;
        this.ringBytes = ringBytes;
        final ByteBuffer mapped = file.memory();
        final int ringRegion = ringBytes + RingBufferDescriptor.TRAILER_LENGTH;
        this.loToHiRegion = mapped.slice(0, ringRegion);
        this.hiToLoRegion = mapped.slice(ringRegion, ringRegion);
        this.loToHi = new OneToOneRingBuffer(new UnsafeBuffer(loToHiRegion));
        this.hiToLo = new OneToOneRingBuffer(new UnsafeBuffer(hiToLoRegion));
    }

    /**
     * Bytes of the file for rings of a given size.
     *
     * @param ringBytes each ring's capacity.
     * @return the file's size.
     */
    static long fileBytes(final int ringBytes)
    {
        return 2L * (ringBytes + RingBufferDescriptor.TRAILER_LENGTH);
    }

    /**
     * Checks a ring size.
     *
     * @param ringBytes the capacity of each ring.
     * @return ringBytes.
     * @throws IllegalArgumentException unless a power of two in [{@value #RING_BYTES_MIN}, {@value #RING_BYTES_MAX}].
     */
    static int checkRingBytes(final int ringBytes)
    {
        if (Integer.bitCount(ringBytes) != 1 || ringBytes < RING_BYTES_MIN || ringBytes > RING_BYTES_MAX)
        {
            throw new IllegalArgumentException(
                "ringBytes must be a power of two in [" + RING_BYTES_MIN + ", " + RING_BYTES_MAX + "], got " +
                ringBytes);
        }
        return ringBytes;
    }

    /**
     * Creates the file (it must not exist), owner-only, filled with zeros, and maps it ({@link ShmFile#create}).
     *
     * @param file      the path; deleted again when anything fails after creating it.
     * @param ringBytes each ring's capacity.
     * @return the mapped segment.
     * @throws IOException when the file exists, or cannot be created, filled or mapped.
     */
    static ShmSegment create(final Path file, final int ringBytes) throws IOException
    {
        checkRingBytes(ringBytes);
        return new ShmSegment(ShmFile.create(file, fileBytes(ringBytes)), ringBytes);
    }

    /**
     * Maps a file that the pair's other rank created.
     *
     * @param file      the path.
     * @param ringBytes each ring's capacity, as the creator said.
     * @return the mapped segment.
     * @throws IOException when the file is missing, of the wrong size, or cannot be mapped.
     */
    static ShmSegment open(final Path file, final int ringBytes) throws IOException
    {
        checkRingBytes(ringBytes);
        return new ShmSegment(ShmFile.open(file, fileBytes(ringBytes)), ringBytes);
    }

    /**
     * Whether another process truncated the file under the mapping ({@link ShmFile#truncation()}).
     *
     * @return what is wrong, naming the sizes, or null when the file is whole (or its size cannot be read).
     */
    String truncation()
    {
        return file.truncation();
    }

    /**
     * The file's path; the file itself may be gone already.
     *
     * @return the path.
     */
    Path file()
    {
        return file.path();
    }

    /**
     * Each ring's capacity.
     *
     * @return bytes.
     */
    int ringBytes()
    {
        return ringBytes;
    }

    /**
     * Bytes of the file, as the layout needs them.
     *
     * @return the size.
     */
    long bytes()
    {
        return fileBytes(ringBytes);
    }

    /**
     * Where a ring's trailer starts in the file.
     *
     * @param loToHi whether it is the ring of the lower rank to the higher.
     * @return the byte offset.
     */
    long trailerOffset(final boolean loToHi)
    {
        return (loToHi ? 0L : ringBytes + RingBufferDescriptor.TRAILER_LENGTH) + ringBytes;
    }

    /**
     * The ring a rank writes.
     *
     * @param lo whether that rank is the pair's lower.
     * @return the ring.
     */
    OneToOneRingBuffer outbound(final boolean lo)
    {
        return lo ? loToHi : hiToLo;
    }

    /**
     * The ring a rank reads.
     *
     * @param lo whether that rank is the pair's lower.
     * @return the ring.
     */
    OneToOneRingBuffer inbound(final boolean lo)
    {
        return lo ? hiToLo : loToHi;
    }

    /**
     * The memory of the ring a rank reads, as a buffer whose indexes are the ring buffer's.
     *
     * @param lo whether that rank is the pair's lower.
     * @return the region; callers take duplicates.
     */
    ByteBuffer inboundRegion(final boolean lo)
    {
        return lo ? hiToLoRegion : loToHiRegion;
    }

    /**
     * The memory of the ring a rank writes, as a buffer whose indexes are the ring buffer's.
     *
     * @param lo whether that rank is the pair's lower.
     * @return the region; callers take duplicates.
     */
    ByteBuffer outboundRegion(final boolean lo)
    {
        return lo ? loToHiRegion : hiToLoRegion;
    }

    /**
     * Whether {@link #unmap()} ran.
     *
     * @return true once the mapping is released.
     */
    boolean isUnmapped()
    {
        return file.isUnmapped();
    }

    /**
     * Releases the mapping. Idempotent. Only when no thread can touch the memory again.
     */
    void unmap()
    {
        file.unmap();
    }
}
