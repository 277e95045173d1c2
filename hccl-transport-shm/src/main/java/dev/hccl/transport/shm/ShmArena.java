package dev.hccl.transport.shm;

import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.PeerMemory;
import dev.hccl.api.spi.RegisteredMemory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The node arena in shared memory: one file of {@code members * regionBytes}, then a line of the transport's own,
 * created by the lowest member, mapped by every member and unlinked as soon as the last has mapped it
 * ({@link ArenaHandshake}), so that nothing is left in the directory however the processes end; the kernel frees the
 * memory with the last mapping.
 * <p>
 * <b>The failure line</b> after the regions holds the member that marked the arena failed, plus one (0 while none
 * has); the first compare-and-set stands.
 * <p>
 * <b>Unmapping.</b> Every access is between {@link #enter()} and {@link #exit()}; {@link #close(long)} stops new
 * entries and unmaps only once the last thread inside has left, or leaves the mapping to the process's exit when one
 * stays: unmapping memory a thread still reads would crash the JVM.
 */
final class ShmArena implements NodeArena
{
    private static final Logger LOG = LoggerFactory.getLogger(ShmArena.class);

    private final ShmFile file;
    private final int[] ranks;
    private final int member;
    private final int regionBytes;
    private final ByteBuffer memory;
    /** The failure line: {@link #TRAILER_BYTES} after the regions. */
    private final ByteBuffer trailer;
    private final ShmRegistrations registrations;
    /** Whether operations cover what they read with CRC32Cs ({@code HCCL_CHECKSUM}). */
    private final boolean checksummed;
    /** The members' ordinary memory, when every member can read every other's ({@link CmaHandshake}); else null. */
    private volatile ShmPeerMemory peerMemory;
    /** Threads inside, plus {@link #CLOSING} once closing has begun. */
    private final AtomicInteger inside = new AtomicInteger();
    /** {@link #finishedSteps()}: this process's, per member. */
    private final long[] finishedSteps;
    /** {@link #spareSteps()}. */
    private final AtomicReference<Object> spareSteps = new AtomicReference<>();

    /** Added to {@link #inside} by {@link #close}: no thread enters afterwards. */
    private static final int CLOSING = 1 << 30;
    private static final long CLOSE_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(100);
    /** Bytes after the regions: the failure line, a cache line of its own. */
    private static final int TRAILER_BYTES = 64;
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    /**
     * @param file        the mapped file, of {@link #fileBytes} bytes.
     * @param ranks       the members' ranks in the root communicator, ascending.
     * @param member      this rank's index in {@code ranks}.
     * @param regionBytes   each member's bytes.
     * @param registrations the members' registered buffers.
     * @param checksummed   {@code HCCL_CHECKSUM}, as every member sets it.
     */
    ShmArena(final ShmFile file, final int[] ranks, final int member, final int regionBytes,
        final ShmRegistrations registrations, final boolean checksummed)
    {
        if (fileBytes(ranks.length, regionBytes) != file.bytes())
        {
            throw new IllegalArgumentException(
                file.bytes() + " bytes mapped for " + ranks.length + " regions of " + regionBytes);
        }
        this.file = file;
        this.ranks = ranks.clone();
        this.member = member;
        this.regionBytes = regionBytes;
        this.registrations = registrations;
        this.checksummed = checksummed;
        this.finishedSteps = new long[ranks.length];
        final int regions = ranks.length * regionBytes;
        this.memory = file.memory().duplicate().limit(regions).slice().order(ByteOrder.nativeOrder());
        this.trailer = file.memory().duplicate().position(regions).slice().order(ByteOrder.nativeOrder());
    }

    /**
     * Bytes of the file for an arena.
     *
     * @param members     ranks that share it.
     * @param regionBytes each one's bytes.
     * @return the size.
     */
    static long fileBytes(final int members, final int regionBytes)
    {
        return (long)members * regionBytes + TRAILER_BYTES;
    }

    @Override
    public int members()
    {
        return ranks.length;
    }

    @Override
    public int member()
    {
        return member;
    }

    @Override
    public int rankOf(final int m)
    {
        return ranks[m];
    }

    @Override
    public int regionBytes()
    {
        return regionBytes;
    }

    @Override
    public ByteBuffer memory()
    {
        return memory;
    }

    @Override
    public RegisteredMemory registeredMemory()
    {
        return registrations;
    }

    /**
     * {@inheritDoc}
     * <p>
     * A read and then a release write, both of which the JVM turns into an {@link InternalError} when the page
     * faults; a compare-and-set is not so guarded, and a fault there (a file truncated under the mapping) would crash
     * the JVM. Two members that mark it at once may both write: either's mark is one that failed.
     */
    /**
     * Offers the members' ordinary memory, once the members agreed on it, before any operation uses the arena.
     *
     * @param memory it, or null when they cannot read each other's.
     */
    void offer(final ShmPeerMemory memory)
    {
        this.peerMemory = memory;
    }

    @Override
    public PeerMemory peerMemory()
    {
        return peerMemory;
    }

    @Override
    public long[] finishedSteps()
    {
        return finishedSteps;
    }

    @Override
    public AtomicReference<Object> spareSteps()
    {
        return spareSteps;
    }

    @Override
    public void markFailed()
    {
        if (!enter())
        {
            return;
        }
        try
        {
            final String damage = damage();
            if (null != damage)
            {
                LOG.warn("rank {}: the node arena is not marked failed: {}", ranks[member], damage);
                return;
            }
            if ((long)LONGS.getAcquire(trailer, 0) == 0)
            {
                LONGS.setRelease(trailer, 0, member + 1L);
            }
        }
        catch (final InternalError fault)
        {
            // Truncated since the look: the memory faults; the links tell the peers all the same.
            LOG.warn("rank {}: the node arena is not marked failed: its memory faults: {}", ranks[member],
                null == damage() ? fault.toString() : damage());
        }
        finally
        {
            exit();
        }
    }

    @Override
    public boolean checksummed()
    {
        return checksummed;
    }

    @Override
    public String corrupted(final String what)
    {
        return ShmDamage.arenaCorrupted(file.path(), what);
    }

    @Override
    public String damage()
    {
        final String truncation = file.truncation();
        return null == truncation ? null : ShmDamage.arenaTruncated(file.path(), truncation);
    }

    @Override
    public int failedMember()
    {
        return (int)(long)LONGS.getAcquire(trailer, 0) - 1;
    }

    @Override
    public boolean enter()
    {
        if (inside.incrementAndGet() >= CLOSING)
        {
            inside.decrementAndGet();
            return false;
        }
        return true;
    }

    @Override
    public void exit()
    {
        inside.decrementAndGet();
    }

    /**
     * Stops new entries and unmaps the memory once no thread is inside. Idempotent.
     *
     * @param waitNanos how long to wait for the threads inside.
     * @return true when the memory is unmapped (now or before); false when a thread stayed inside, and the mapping is
     * left to the process's exit.
     */
    boolean close(final long waitNanos)
    {
        synchronized (this)
        {
            if (file.isUnmapped())
            {
                return true;
            }
            final ShmPeerMemory peers = peerMemory;
            if (null != peers && LOG.isDebugEnabled())
            {
                LOG.debug("rank {}: read {} bytes of peers' ordinary buffers in {} reads with process_vm_readv",
                    ranks[member], peers.bytesRead(), peers.reads());
            }
            if (inside.get() < CLOSING)
            {
                inside.addAndGet(CLOSING);
            }
            final long deadline = System.nanoTime() + waitNanos;
            // Held aside while waiting: a park returns at once on an interrupted thread.
            boolean interrupted = Thread.interrupted();
            try
            {
                while (inside.get() != CLOSING)
                {
                    if (System.nanoTime() - deadline >= 0)
                    {
                        return false;
                    }
                    LockSupport.parkNanos(CLOSE_POLL_NANOS);
                    interrupted |= Thread.interrupted();
                }
            }
            finally
            {
                if (interrupted)
                {
                    Thread.currentThread().interrupt();
                }
            }
            registrations.close();
            file.unmap();
            return true;
        }
    }

    /**
     * Whether the memory is unmapped.
     *
     * @return true after a {@link #close(long)} that unmapped it.
     */
    boolean isUnmapped()
    {
        return file.isUnmapped();
    }

    @Override
    public String toString()
    {
        return "node arena of ranks " + java.util.Arrays.toString(ranks) + ", " + regionBytes / 1024 + " KiB each" +
            (null == peerMemory ? "" : ", ordinary buffers read with process_vm_readv");
    }
}
