package dev.hccl.transport.shm;

import dev.hccl.api.spi.NativeCopy;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import org.agrona.BufferUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;

/**
 * One entry of a link's send queue: a message (its MESSAGE record, then its payload in DATA records) or an ABORT,
 * and how far it is written. Holds the caller's buffer until the last byte is in the ring, and reads it at absolute
 * indexes only: the caller's position, limit and bytes stay as they are. Used under its link's lock only.
 */
final class ShmOutgoing
{
    private int type;
    private long commId;
    private long seq;
    private long tag;
    private OpDescriptor desc;
    private ByteBuffer payload;
    private int start;
    private int length;
    private int offset;
    private boolean headerWritten;
    private Request done;
    private byte[] reason;

    /**
     * Makes this entry a message.
     *
     * @param commId  the communicator.
     * @param seq     the sequence number.
     * @param tag     the tag.
     * @param desc    the fingerprint.
     * @param payload the caller's bytes, from its position to its limit.
     * @param done    completed once the last byte is in the ring.
     */
    void message(
        final long commId, final long seq, final long tag, final OpDescriptor desc, final ByteBuffer payload,
        final Request done)
    {
        this.type = ShmRecords.MESSAGE;
        this.commId = commId;
        this.seq = seq;
        this.tag = tag;
        this.desc = desc;
        this.payload = payload;
        this.start = payload.position();
        this.length = payload.remaining();
        this.offset = 0;
        this.headerWritten = false;
        this.done = done;
    }

    /**
     * Makes this entry an ABORT.
     *
     * @param commId the communicator that failed.
     * @param reason the reason, in UTF-8, short enough for one record.
     */
    void abort(final long commId, final byte[] reason)
    {
        this.type = ShmRecords.ABORT;
        this.commId = commId;
        this.reason = reason;
        this.length = 0;
        this.offset = 0;
        this.headerWritten = false;
        this.done = null;
    }

    /**
     * Writes as much of the entry as the ring takes now, each record claimed, filled and committed in turn.
     *
     * @param ring       the link's ring.
     * @param chunkBytes the most payload bytes in one DATA record, a multiple of 8.
     * @param checksum   the CRC32C that ends each DATA record ({@code HCCL_CHECKSUM}), or null for none.
     * @return the records written.
     */
    int writeTo(final OneToOneRingBuffer ring, final int chunkBytes, final ShmChecksum checksum)
    {
        final AtomicBuffer buffer = ring.buffer();
        if (ShmRecords.ABORT == type)
        {
            final int index = ring.tryClaim(ShmRecords.ABORT, ShmRecords.ABORT_REASON_OFFSET + reason.length);
            if (index < 0)
            {
                return 0;
            }
            buffer.putLong(index + ShmRecords.COMM_ID_OFFSET, commId);
            buffer.putInt(index + ShmRecords.ABORT_LENGTH_OFFSET, reason.length);
            buffer.putBytes(index + ShmRecords.ABORT_REASON_OFFSET, reason);
            ring.commit(index);
            headerWritten = true;
            return 1;
        }
        int records = 0;
        if (!headerWritten)
        {
            final int index = ring.tryClaim(ShmRecords.MESSAGE, ShmRecords.MESSAGE_LENGTH);
            if (index < 0)
            {
                return 0;
            }
            ShmRecords.putMessage(buffer, index, commId, seq, tag, desc, length);
            ring.commit(index);
            headerWritten = true;
            records++;
        }
        while (offset < length)
        {
            final int n = Math.min(chunkBytes, length - offset);
            final int index = ring.tryClaim(ShmRecords.DATA, null == checksum ? n : n + ShmRecords.CHECKSUM_BYTES);
            if (index < 0)
            {
                break;
            }
            try
            {
                copyIn(buffer, index, n);
                if (null != checksum)
                {
                    // Of the bytes in the ring, as the receiver will read them.
                    buffer.putInt(index + n, checksum.of(index, n));
                }
            }
            catch (final RuntimeException | Error ex)
            {
                // A claim left open would stop the ring for good.
                ring.abort(index);
                throw ex;
            }
            ring.commit(index);
            offset += n;
            records++;
        }
        return records;
    }

    /**
     * Whether the whole entry is in the ring.
     *
     * @return true once written.
     */
    boolean finished()
    {
        return headerWritten && offset >= length;
    }

    /**
     * Whether this is a message (an entry that may be reused for the next one).
     *
     * @return true for a message, false for an ABORT.
     */
    boolean isMessage()
    {
        return ShmRecords.MESSAGE == type;
    }

    /**
     * The request to complete.
     *
     * @return the request, or null for an ABORT.
     */
    Request done()
    {
        return done;
    }

    /**
     * Lets go of the caller's buffer, request and fingerprint.
     */
    void clear()
    {
        desc = null;
        payload = null;
        done = null;
        reason = null;
    }

    /**
     * The payload's next {@code n} bytes (at most {@link ShmRecords#DATA_CHUNK_MAX_BYTES}) into the ring at
     * {@code index}: through the C library's copy where it pays ({@link NativeCopy}; the ring's lines were last read by
     * the receiving core), else Agrona's.
     */
    private void copyIn(final AtomicBuffer buffer, final int index, final int n)
    {
        final int from = start + offset;
        if (n >= NativeCopy.MIN_BYTES && payload.isDirect() && null == buffer.byteArray() && NativeCopy.ready())
        {
            NativeCopy.copy(buffer.addressOffset() + index, BufferUtil.address(payload) + from, n);
            Reference.reachabilityFence(payload);
        }
        else
        {
            buffer.putBytes(index, payload, from, n);
        }
    }
}
