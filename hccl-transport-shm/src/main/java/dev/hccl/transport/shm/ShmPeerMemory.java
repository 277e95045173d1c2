package dev.hccl.transport.shm;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.PeerMemory;
import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * The arena members' ordinary memory, read with {@code process_vm_readv} ({@link CmaCalls}), once every member found
 * that it can read every other's ({@link CmaHandshake}).
 * <p>
 * A read writes into this process's memory by address, so it checks the destination's bounds before the kernel
 * does anything: a wrong index would otherwise overwrite the JVM's memory instead of throwing. The two {@code iovec}s
 * live in one direct buffer made once, so a read allocates nothing. Not thread-safe: one operation at a time, as the
 * arena's ({@link dev.hccl.api.spi.NodeArena}).
 */
final class ShmPeerMemory implements PeerMemory
{
    /** Bytes of {@link #staging()}: a reduction reads them right after the copy, from the core's own cache. */
    static final int STAGING_BYTES = 64 * 1024;

    private final int rank;
    /** The members' ranks and their processes' ids, by member. */
    private final int[] ranks;
    private final int[] pids;
    private final CmaCalls.Reader calls;
    /** The local {@code struct iovec} (base, length) at 0, the remote one at 16. */
    private final ByteBuffer iovecs = ByteBuffer.allocateDirect(32).order(ByteOrder.nativeOrder());
    private final long iovecsAddress = BufferUtil.address(iovecs);
    private final ByteBuffer staging = ByteBuffer.allocateDirect(STAGING_BYTES).order(ByteOrder.nativeOrder());
    /** What was read, for the DEBUG line at close: written by the one reader, read by whoever closes. */
    private volatile long reads;
    private volatile long bytesRead;

    /**
     * @param rank  this rank.
     * @param ranks the members' ranks.
     * @param pids  their processes, as each published its own.
     * @param calls this member's calls.
     */
    ShmPeerMemory(final int rank, final int[] ranks, final int[] pids, final CmaCalls.Reader calls)
    {
        this.rank = rank;
        this.ranks = ranks.clone();
        this.pids = pids.clone();
        this.calls = calls;
    }

    @Override
    public long address(final ByteBuffer buffer, final int index)
    {
        if (!buffer.isDirect())
        {
            return 0;
        }
        Objects.checkIndex(index, buffer.capacity() + 1);
        return BufferUtil.address(buffer) + index;
    }

    @Override
    public void read(final int member, final long address, final ByteBuffer into, final int index, final int length)
    {
        Objects.checkFromIndexSize(index, length, into.capacity());
        if (into.isDirect())
        {
            copy(member, address, BufferUtil.address(into) + index, length);
            return;
        }
        for (int done = 0; done < length; done += STAGING_BYTES)
        {
            final int bytes = Math.min(STAGING_BYTES, length - done);
            copy(member, address + done, BufferUtil.address(staging), bytes);
            into.put(index + done, staging, 0, bytes);
        }
    }

    /**
     * Reads a long of a member's process, to learn whether this one may: once, before the arena's operations.
     *
     * @param member  the member.
     * @param address where the long lies in its process.
     * @param into    a direct buffer of 8 bytes or more, where it goes.
     * @return 0 when read; else the {@code errno} of the refusal (-1 when the kernel copied nothing and said
     *         nothing).
     */
    int probe(final int member, final long address, final ByteBuffer into)
    {
        final long bytes = readv(member, address, BufferUtil.address(into), Long.BYTES);
        return bytes == Long.BYTES ? 0 : bytes < 0 ? calls.errno() : -1;
    }

    private long readv(final int member, final long remote, final long local, final long length)
    {
        iovecs.putLong(0, local);
        iovecs.putLong(8, length);
        iovecs.putLong(16, remote);
        iovecs.putLong(24, length);
        return calls.readv(pids[member], iovecsAddress, iovecsAddress + 16);
    }

    /**
     * Reads bytes of a member's process into this one's, by address, all of them: the kernel may copy fewer than
     * asked in one call.
     */
    private void copy(final int member, final long remote, final long local, final int length)
    {
        long copied = 0;
        while (copied < length)
        {
            final long bytes = readv(member, remote + copied, local + copied, length - copied);
            if (bytes <= 0)
            {
                throw failed(member, remote + copied, length - copied, bytes < 0 ? calls.errno() : 0);
            }
            copied += bytes;
        }
        // One writer: the operation's thread.
        reads = reads + 1;
        bytesRead = bytesRead + length;
    }

    /**
     * @return the reads so far, each of one piece that may have taken several calls.
     */
    long reads()
    {
        return reads;
    }

    /**
     * @return the bytes read so far.
     */
    long bytesRead()
    {
        return bytesRead;
    }

    private HcclException failed(final int member, final long address, final long length, final int errno)
    {
        final int peer = ranks[member];
        final String read = "reading " + length + " bytes of rank " + peer + "'s memory at 0x" +
            Long.toHexString(address) + " (process " + pids[member] + ") with process_vm_readv";
        if (errno == CmaCalls.ESRCH)
        {
            return new HcclException(ErrorCode.E_REMOTE, rank, peer, null, HcclException.NO_SEQUENCE,
                read + " failed: its process is gone", null);
        }
        return new HcclException(ErrorCode.E_INTERNAL, rank, peer, null, HcclException.NO_SEQUENCE, read +
            " failed with errno " + errno + (errno == CmaCalls.EFAULT ? " (EFAULT: it does not map that address)" :
            errno == CmaCalls.EPERM ? " (EPERM: the kernel no longer lets this process read it, though it did when " +
            "the communicator was made)" : "") +
            "; set HCCL_CMA=0 to copy through the node arena instead, and report this", null);
    }

    /**
     * @param member a member.
     * @return its process's id, as it published it.
     */
    int pid(final int member)
    {
        return pids[member];
    }

    @Override
    public ByteBuffer staging()
    {
        return staging;
    }

    @Override
    public int stagingBytes()
    {
        return STAGING_BYTES;
    }

    @Override
    public String toString()
    {
        return "process_vm_readv";
    }
}
