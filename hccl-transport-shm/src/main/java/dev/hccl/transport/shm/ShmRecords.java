package dev.hccl.transport.shm;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.DescriptorCodec;
import dev.hccl.api.spi.OpDescriptor;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;

/**
 * The records a rank writes into the ring it produces, as Agrona record types. Both ends share the machine, so the
 * fields are in its native byte order; payload bytes are carried as they are.
 *
 * <pre>
 *  MESSAGE (48 bytes)                        ABORT (12 + n bytes)
 *  offset size field                         offset size field
 *   0     8    commId                         0     8    commId
 *   8     8    seq                            8     4    n, the reason's length
 *  16     8    tag                           12     n    the reason, UTF-8
 *  24     8    count        (OpDescriptor)
 *  32     4    root         (OpDescriptor)   DATA: the next bytes of the message's payload, as they are
 *  36     4    payload length
 *  40     1    operation code                GOODBYE: empty
 *  41     1    data type code, 0xFF = none
 *  42     1    reduce op code, 0xFF = none
 * </pre>
 *
 * A MESSAGE is followed by DATA records holding its payload in order, each at most {@link #DATA_CHUNK_MAX_BYTES}
 * and, but for the last, a multiple of 8 bytes, until the length is consumed; a zero-length message has none.
 * Nothing else comes between a MESSAGE and its last DATA record. Under {@code HCCL_CHECKSUM}, which both ranks of a
 * pair set alike, each DATA record ends with {@link #CHECKSUM_BYTES} more: the CRC32C of its payload bytes, which the
 * receiver checks before its sink reads them; without it nothing follows the payload.
 */
final class ShmRecords
{
    /** A message's header: its fingerprint and length. */
    static final int MESSAGE = 1;
    /** A chunk of the current message's payload. */
    static final int DATA = 2;
    /** The sender's communicator failed; the record says why. */
    static final int ABORT = 3;
    /** The sender closed its side in good order; nothing follows. */
    static final int GOODBYE = 4;

    /** The largest DATA record: the receiver's sink sees chunks of this size at most. */
    static final int DATA_CHUNK_MAX_BYTES = 64 * 1024;
    /** Bytes of the CRC32C that ends a DATA record under {@code HCCL_CHECKSUM}. */
    static final int CHECKSUM_BYTES = 4;
    /** The longest ABORT reason (the ring may bound it further). */
    static final int ABORT_REASON_MAX_BYTES = 4096;
    /** The code of a data type or reduction an operation has not. */
    static final int NONE = DescriptorCodec.NONE;

    static final int COMM_ID_OFFSET = 0;
    static final int SEQ_OFFSET = 8;
    static final int TAG_OFFSET = 16;
    static final int COUNT_OFFSET = 24;
    static final int ROOT_OFFSET = 32;
    static final int LENGTH_OFFSET = 36;
    static final int OPERATION_OFFSET = 40;
    static final int DATA_TYPE_OFFSET = 41;
    static final int REDUCE_OP_OFFSET = 42;
    /** Bytes of a MESSAGE record. */
    static final int MESSAGE_LENGTH = 48;

    static final int ABORT_LENGTH_OFFSET = 8;
    static final int ABORT_REASON_OFFSET = 12;

    private ShmRecords()
    {
    }

    /**
     * The DATA chunk size for a ring: {@link #DATA_CHUNK_MAX_BYTES}, or less where the ring's largest record is
     * smaller; a multiple of 8.
     *
     * @param ring     the ring.
     * @param checksum whether each DATA record also holds a CRC32C ({@link #CHECKSUM_BYTES}).
     * @return the chunk size.
     */
    static int chunkBytes(final RingBuffer ring, final boolean checksum)
    {
        return Math.min(DATA_CHUNK_MAX_BYTES, (ring.maxMsgLength() - (checksum ? CHECKSUM_BYTES : 0)) & ~7);
    }

    /**
     * The longest ABORT reason a ring carries.
     *
     * @param ring the ring.
     * @return bytes.
     */
    static int abortReasonMaxBytes(final RingBuffer ring)
    {
        return Math.min(ABORT_REASON_MAX_BYTES, ring.maxMsgLength() - ABORT_REASON_OFFSET);
    }

    /**
     * Writes a MESSAGE record's body.
     *
     * @param b      the ring's buffer.
     * @param index  where the claimed record's body starts.
     * @param commId the communicator.
     * @param seq    the sequence number.
     * @param tag    the tag.
     * @param desc   the fingerprint.
     * @param length the payload length.
     */
    static void putMessage(
        final MutableDirectBuffer b,
        final int index,
        final long commId,
        final long seq,
        final long tag,
        final OpDescriptor desc,
        final int length)
    {
        final DataType dataType = desc.dataType();
        final ReduceOp reduceOp = desc.reduceOp();
        b.putLong(index + COMM_ID_OFFSET, commId);
        b.putLong(index + SEQ_OFFSET, seq);
        b.putLong(index + TAG_OFFSET, tag);
        b.putLong(index + COUNT_OFFSET, desc.count());
        b.putInt(index + ROOT_OFFSET, desc.root());
        b.putInt(index + LENGTH_OFFSET, length);
        b.putByte(index + OPERATION_OFFSET, (byte)DescriptorCodec.code(desc.operation()));
        b.putByte(index + DATA_TYPE_OFFSET, (byte)DescriptorCodec.code(dataType));
        b.putByte(index + REDUCE_OP_OFFSET, (byte)DescriptorCodec.code(reduceOp));
        b.putByte(index + REDUCE_OP_OFFSET + 1, (byte)0);
        b.putInt(index + REDUCE_OP_OFFSET + 2, 0);
    }
}
