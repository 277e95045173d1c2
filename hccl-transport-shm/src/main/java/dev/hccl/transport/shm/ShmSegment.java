package dev.hccl.transport.shm;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

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
 * Ownership: the segment owns its mapping. {@link #unmap()} may be called only when no thread can touch the memory
 * again; a thread that does afterwards crashes the JVM.
 * <p>
 * Size: the segment also keeps the file open, so that {@link #truncation()} tells from the file's size
 * whether another process shrank it under the mapping (where an access faults: SIGBUS, which the JVM turns into an
 * {@link InternalError}, thrown at the access or, from compiled code, a little later).
 */
final class ShmSegment
{
    /** Owner-only: no other user may map a rank's data. */
    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    /** The smallest ring allowed. */
    static final int RING_BYTES_MIN = 4 * 1024;
    /** The largest ring allowed: two of them and their trailers must stay under 2 GiB, one mapping's limit. */
    static final int RING_BYTES_MAX = 512 * 1024 * 1024;

    private static final int FILL_CHUNK_BYTES = 64 * 1024;
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_ATTRIBUTE =
        PosixFilePermissions.asFileAttribute(OWNER_ONLY);

    private final Path file;
    private final int ringBytes;
    private final MappedByteBuffer mapped;
    /** The file, kept open for its size; closed with the mapping. */
    private final FileChannel channel;
    private final ByteBuffer loToHiRegion;
    private final ByteBuffer hiToLoRegion;
    private final OneToOneRingBuffer loToHi;
    private final OneToOneRingBuffer hiToLo;
    private boolean unmapped;

    private ShmSegment(
        final Path file, final int ringBytes, final MappedByteBuffer mapped, final FileChannel channel)
    {
        this.file = file;
        this.ringBytes = ringBytes;
        this.mapped = mapped;
        this.channel = channel;
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
     * Creates the file (it must not exist), owner-only, fills it with zeros through the channel and maps it. Written
     * through the channel, every page is allocated now: a directory that lacks the room fails here with an
     * {@link IOException} ("No space left on device"), where a sparse file would map fine and kill the JVM with
     * SIGBUS at the first write to a page that tmpfs cannot back.
     *
     * @param file      the path; deleted again when anything fails after creating it.
     * @param ringBytes each ring's capacity.
     * @return the mapped segment.
     * @throws IOException when the file exists, or cannot be created, filled or mapped.
     */
    static ShmSegment create(final Path file, final int ringBytes) throws IOException
    {
        checkRingBytes(ringBytes);
        final long size = fileBytes(ringBytes);
        final Set<OpenOption> options = Set.of(
            StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS);
        final FileChannel channel;
        try
        {
            channel = FileChannel.open(file, options, OWNER_ONLY_ATTRIBUTE);
        }
        catch (final UnsupportedOperationException ex)
        {
            throw new IOException("cannot create " + file + " owner-only: " + ex.getMessage(), ex);
        }
        // From here the file is ours: any failure deletes it.
        MappedByteBuffer mapped = null;
        try
        {
            fillWithZeros(channel, size);
            mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, size);
            return new ShmSegment(file, ringBytes, mapped, channel);
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            if (null != mapped)
            {
                IoUtil.unmap(mapped);
            }
            closeQuietly(channel, ex);
            deleteQuietly(file, ex);
            throw ex;
        }
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
        final long size = fileBytes(ringBytes);
        final FileChannel channel = FileChannel.open(
            file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        try
        {
            final long actual = channel.size();
            if (actual != size)
            {
                throw new IOException(file + " holds " + actual + " bytes, not the " + size + " expected");
            }
            return new ShmSegment(file, ringBytes, channel.map(FileChannel.MapMode.READ_WRITE, 0, size), channel);
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            closeQuietly(channel, ex);
            throw ex;
        }
    }

    private static void closeQuietly(final FileChannel channel, final Throwable failure)
    {
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            failure.addSuppressed(ex);
        }
    }

    /**
     * Whether the file is shorter than the layout needs: another process truncated it under the mapping, so that an
     * access to the pages it no longer backs faults. Reads the size of the file kept open, not the memory.
     *
     * @return what is wrong, naming the sizes, or null when the file is whole (or its size cannot be read).
     */
    String truncation()
    {
        long actual;
        try
        {
            actual = channel.size();
        }
        catch (final IOException ex)
        {
            return null;
        }
        return actual >= bytes() ? null : "holds " + actual + " bytes where its layout needs " + bytes();
    }

    private static void fillWithZeros(final FileChannel channel, final long size) throws IOException
    {
        final ByteBuffer zeros = ByteBuffer.allocateDirect(FILL_CHUNK_BYTES);
        long position = 0;
        while (position < size)
        {
            zeros.clear().limit((int)Math.min(FILL_CHUNK_BYTES, size - position));
            while (zeros.hasRemaining())
            {
                position += channel.write(zeros, position);
            }
        }
    }

    private static void deleteQuietly(final Path file, final Throwable failure)
    {
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ex)
        {
            failure.addSuppressed(ex);
        }
    }

    /**
     * The file's path; the file itself may be gone already.
     *
     * @return the path.
     */
    Path file()
    {
        return file;
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
        return unmapped;
    }

    /**
     * Releases the mapping. Idempotent. Only when no thread can touch the memory again.
     */
    void unmap()
    {
        if (!unmapped)
        {
            unmapped = true;
            IoUtil.unmap(mapped);
            try
            {
                channel.close();
            }
            catch (final IOException ex)
            {
                // Nothing is lost: the descriptor only told the size.
            }
        }
    }
}
