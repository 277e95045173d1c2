package dev.hccl.transport.shm;

import dev.hccl.api.spi.RegisteredMemory;
import org.agrona.BufferUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The node arena's registered buffers in shared memory: each registration is one file per member, created by that
 * member (owner-only, zeros written through, named with the job's key: {@link ShmNames#registeredFileName}), mapped by
 * every other member, and unlinked by its creator once all have mapped it, so that nothing stays in the directory; a
 * registration abandoned (a member could not make or map its memory, or died meanwhile) has every member remove every
 * member's file.
 * <p>
 * <b>Ownership.</b> A member's own mapping is the application's buffer from the moment the registration is complete:
 * it is never unmapped here (a thread of the application touching unmapped memory would crash the JVM); the garbage
 * collector releases it with the last reference. The peers' mappings are read only by the algorithms, inside the
 * arena, and are released when the arena closes, once no thread is inside ({@link ShmArena#close}).
 * <p>
 * Registering runs on one thread at a time (the communicator's allocating thread); {@link #locate} and {@link #memory}
 * run on the operations' threads meanwhile: the complete registrations are an array replaced whole.
 */
final class ShmRegistrations implements RegisteredMemory
{
    private static final Logger LOG = LoggerFactory.getLogger(ShmRegistrations.class);

    /** A complete registration: every member's memory as mapped here, and this member's own address. */
    private record Registration(int id, int bytes, long address, ByteBuffer[] memory, ShmFile[] files)
    {
    }

    private final int[] ranks;
    private final int member;
    private final ShmNames names;
    private final Path dir;
    private volatile Registration[] complete = new Registration[0];
    /** The registration under way: its id, and the files made or mapped so far (this member's at its index). */
    private int nextId;
    private int pendingBytes;
    private ShmFile[] pending;
    private boolean closed;

    /**
     * @param ranks  the members' ranks in the root communicator, ascending.
     * @param member this rank's index in {@code ranks}.
     * @param names  the names of the job's files.
     * @param dir    the shared-memory directory.
     */
    ShmRegistrations(final int[] ranks, final int member, final ShmNames names, final Path dir)
    {
        this.ranks = ranks.clone();
        this.member = member;
        this.names = names;
        this.dir = dir;
    }

    @Override
    public synchronized ByteBuffer create(final int bytes)
    {
        if (bytes <= 0 || null != pending || closed)
        {
            throw new IllegalStateException("rank " + ranks[member] + ": cannot register " + bytes + " bytes now" +
                (closed ? ": the node arena is closed" : null != pending ? ": registration " + nextId +
                " is under way" : ""));
        }
        pending = new ShmFile[ranks.length];
        pendingBytes = bytes;
        final Path path = path(member, nextId);
        try
        {
            pending[member] = ShmFile.create(path, bytes);
            return pending[member].memory().duplicate().order(ByteOrder.nativeOrder());
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.warn("rank {}: cannot register a buffer of {} bytes in shared memory: cannot create {} ({} free in " +
                "{}): {}; every rank gets an ordinary buffer, which the collectives copy. Point {} to a tmpfs with " +
                "more room, or give the container more shared memory (Docker's --shm-size, {} by default)",
                ranks[member], bytes, path, ShmFile.usableBytes(dir), dir, ex.toString(), ShmTransportProvider.DIR.variable(),
                ShmHandshake.DOCKER_SHM_DEFAULT);
            return null;
        }
    }

    @Override
    public synchronized boolean mapPeers(final int bytes)
    {
        if (null == pending || null == pending[member] || bytes != pendingBytes)
        {
            throw new IllegalStateException("rank " + ranks[member] + ": no registration of " + bytes +
                " bytes to map the peers' memory of");
        }
        for (int m = 0; m < ranks.length; m++)
        {
            if (m == member)
            {
                continue;
            }
            final Path path = path(m, nextId);
            try
            {
                pending[m] = ShmFile.open(path, bytes);
            }
            catch (final IOException | RuntimeException ex)
            {
                LOG.warn("rank {}: cannot map rank {}'s registered buffer {}: {} (do all ranks see the same {}?); " +
                    "every rank gets an ordinary buffer", ranks[member], ranks[m], path, ex.toString(),
                    ShmTransportProvider.DIR.variable());
                return false;
            }
        }
        return true;
    }

    @Override
    public synchronized boolean conclude(final boolean complete)
    {
        if (null == pending)
        {
            return false;
        }
        final ShmFile[] files = pending;
        pending = null;
        final int id = nextId++;
        if (!complete || closed)
        {
            // Every member's file, whether made or not: a member that died after making its own cannot remove it.
            for (int m = 0; m < files.length; m++)
            {
                delete(path(m, id));
            }
            // Nobody was handed this memory: every mapping can go.
            for (final ShmFile file : files)
            {
                if (null != file)
                {
                    file.unmap();
                }
            }
            return false;
        }
        delete(files[member].path());
        final ByteBuffer[] memory = new ByteBuffer[files.length];
        for (int m = 0; m < files.length; m++)
        {
            memory[m] = files[m].memory().duplicate().order(ByteOrder.nativeOrder());
            files[m].closeDescriptor();
        }
        final Registration[] grown = Arrays.copyOf(this.complete, this.complete.length + 1);
        grown[grown.length - 1] = new Registration(id, pendingBytes, BufferUtil.address(memory[member]), memory, files);
        this.complete = grown;
        return true;
    }

    @Override
    public long locate(final ByteBuffer buffer, final int index, final int length)
    {
        if (!buffer.isDirect() || index < 0 || length < 0 || (long)index + length > buffer.capacity())
        {
            return -1;
        }
        final long address = BufferUtil.address(buffer) + index;
        for (final Registration r : complete)
        {
            final long offset = address - r.address;
            if (offset >= 0 && offset + length <= r.bytes)
            {
                return (long)r.id << 32 | offset;
            }
        }
        return -1;
    }

    @Override
    public ByteBuffer memory(final int m, final int id)
    {
        for (final Registration r : complete)
        {
            if (r.id == id)
            {
                return r.memory[m];
            }
        }
        return null;
    }

    /**
     * Releases the peers' mappings, and abandons a registration under way. Only once no thread can read them.
     */
    synchronized void close()
    {
        closed = true;
        conclude(false);
        for (final Registration r : complete)
        {
            for (int m = 0; m < r.files.length; m++)
            {
                if (m != member)
                {
                    r.files[m].unmap();
                }
            }
        }
        complete = new Registration[0];
    }

    private Path path(final int m, final int id)
    {
        return dir.resolve(names.registeredFileName(ranks[m], id));
    }

    private static void delete(final Path path)
    {
        try
        {
            Files.deleteIfExists(path);
        }
        catch (final IOException ex)
        {
            LOG.debug("could not delete {}: {}", path, ex.toString());
        }
    }
}
