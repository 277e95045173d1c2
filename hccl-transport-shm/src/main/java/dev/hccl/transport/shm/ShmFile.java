package dev.hccl.transport.shm;

import org.agrona.IoUtil;

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
 * A file in the shared-memory directory, mapped whole: what a pair's segment ({@link ShmSegment}) and the node arena
 * ({@link ShmArena}) are made of. Created owner-only and never through a link, filled with zeros through the channel
 * so that every page is allocated at creation (a directory that lacks the room fails here with an
 * {@link IOException}, "No space left on device", where a sparse file would map fine and kill the JVM with SIGBUS at
 * the first write to a page that tmpfs cannot back). The file stays open for its size: {@link #truncation()} tells
 * whether another process shrank it under the mapping.
 * <p>
 * Ownership: {@link #unmap()} may be called only when no thread can touch the memory again; a thread that does
 * afterwards crashes the JVM.
 */
final class ShmFile
{
    /** Owner-only: no other user may map a rank's data. */
    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private static final int FILL_CHUNK_BYTES = 64 * 1024;
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_ATTRIBUTE =
        PosixFilePermissions.asFileAttribute(OWNER_ONLY);

    private final Path path;
    private final long bytes;
    private final MappedByteBuffer mapped;
    private final FileChannel channel;
    private boolean unmapped;

    private ShmFile(final Path path, final long bytes, final MappedByteBuffer mapped, final FileChannel channel)
    {
        this.path = path;
        this.bytes = bytes;
        this.mapped = mapped;
        this.channel = channel;
    }

    /**
     * Creates the file (it must not exist), owner-only, fills it with zeros and maps it.
     *
     * @param path  the path; deleted again when anything fails after creating it.
     * @param bytes the size, at most 2 GiB - 1 (one mapping's limit).
     * @return the mapped file.
     * @throws IOException when the file exists, or cannot be created, filled or mapped.
     */
    static ShmFile create(final Path path, final long bytes) throws IOException
    {
        final Set<OpenOption> options = Set.of(
            StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS);
        final FileChannel channel;
        try
        {
            channel = FileChannel.open(path, options, OWNER_ONLY_ATTRIBUTE);
        }
        catch (final UnsupportedOperationException ex)
        {
            throw new IOException("cannot create " + path + " owner-only: " + ex.getMessage(), ex);
        }
        // From here the file is ours: any failure deletes it.
        MappedByteBuffer mapped = null;
        try
        {
            fillWithZeros(channel, bytes);
            mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
            return new ShmFile(path, bytes, mapped, channel);
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            if (null != mapped)
            {
                IoUtil.unmap(mapped);
            }
            closeQuietly(channel, ex);
            deleteQuietly(path, ex);
            throw ex;
        }
    }

    /**
     * Maps a file that another rank created.
     *
     * @param path  the path.
     * @param bytes the size its creator said.
     * @return the mapped file.
     * @throws IOException when the file is missing, of another size, or cannot be mapped.
     */
    static ShmFile open(final Path path, final long bytes) throws IOException
    {
        final FileChannel channel = FileChannel.open(
            path, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        try
        {
            final long actual = channel.size();
            if (actual != bytes)
            {
                throw new IOException(path + " holds " + actual + " bytes, not the " + bytes + " expected");
            }
            return new ShmFile(path, bytes, channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes), channel);
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            closeQuietly(channel, ex);
            throw ex;
        }
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
     * The bytes still free in a directory, for the messages that say a file did not fit.
     *
     * @param dir the directory.
     * @return the figure, or {@code unknown}.
     */
    static String usableBytes(final Path dir)
    {
        try
        {
            return String.valueOf(Files.getFileStore(dir).getUsableSpace());
        }
        catch (final IOException | RuntimeException ex)
        {
            return "unknown";
        }
    }

    /**
     * The file's path; the file itself may be gone already.
     *
     * @return the path.
     */
    Path path()
    {
        return path;
    }

    /**
     * The mapping, from byte 0.
     *
     * @return the memory; callers take slices.
     */
    MappedByteBuffer memory()
    {
        return mapped;
    }

    /**
     * Bytes of the file, as mapped.
     *
     * @return the size.
     */
    long bytes()
    {
        return bytes;
    }

    /**
     * Whether the file is shorter than its mapping: another process truncated it, so that an access to the pages it
     * no longer backs faults (SIGBUS, which the JVM turns into an {@link InternalError}, thrown at the access or, from
     * compiled code, a little later). Reads the size of the file kept open, not the memory.
     *
     * @return what is wrong, naming the sizes, or null when the file is whole (or its size cannot be read).
     */
    String truncation()
    {
        final long actual;
        try
        {
            actual = channel.size();
        }
        catch (final IOException ex)
        {
            return null;
        }
        return actual >= bytes ? null : "holds " + actual + " bytes where its layout needs " + bytes;
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
     * Closes the file's descriptor and keeps the mapping: {@link #truncation()} can no longer tell anything. For a
     * mapping that is handed to the application, which the garbage collector releases, or one kept only to be read.
     */
    void closeDescriptor()
    {
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            // Nothing is lost: the descriptor only told the size.
        }
    }

    /**
     * Releases the mapping and the file's descriptor. Idempotent. Only when no thread can touch the memory again.
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
