package dev.hccl.transport.netty;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.DescriptorCodec;
import dev.hccl.api.spi.OpDescriptor;
import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Layout of the frames that follow the handshake. Every frame is a fixed 48-byte header, in big-endian (network)
 * byte order, followed by {@code payloadLength} bytes of payload:
 *
 * <pre>
 *  offset size field
 *   0     4    magic          0x48434346 ("HCCF")
 *   4     1    type           DATA=1, ABORT=2, GOODBYE=3, HEARTBEAT=4
 *   5     1    operation      Operation.code() (0xFF in ABORT and GOODBYE frames)
 *   6     1    dataType       DataType.code(), 0xFF = none
 *   7     1    reduceOp       ReduceOp.code(), 0xFF = none
 *   8     4    root           OpDescriptor root, -1 = none
 *  12     4    payloadLength  0 .. maxFrameBytes
 *  16     8    commId         the communicator the message belongs to
 *  24     8    seq            the operation's sequence number
 *  32     8    tag            the tag within the operation
 *  40     8    count          the operation's count argument
 *  48          payload        DATA: the message; ABORT: UTF-8 reason; GOODBYE: empty
 * </pre>
 *
 * The payload bytes themselves are carried as they are: element data in the native (little-endian) order that
 * {@link DataType} prescribes. Under {@code HCCL_CHECKSUM}, which every rank sets alike, a DATA frame with a payload is
 * followed by {@link #CHECKSUM_LENGTH} more bytes, not counted in {@code payloadLength}: the CRC32C of the payload
 * (big-endian); without it nothing follows. Other frames never carry one.
 */
final class Frames
{
    /** First four bytes of every frame header: "HCCF". */
    static final int MAGIC = 0x48434346;
    /** Bytes in a frame header. */
    static final int HEADER_LENGTH = 48;
    /** Bytes of the CRC32C after a DATA frame's payload, under {@code HCCL_CHECKSUM}. */
    static final int CHECKSUM_LENGTH = 4;

    /** A message of an operation. */
    static final int TYPE_DATA = 1;
    /** The sender's communicator failed; the payload says why. */
    static final int TYPE_ABORT = 2;
    /** The sender closes its side in good order; nothing follows. */
    static final int TYPE_GOODBYE = 3;
    /** Empty: sent every second on an idle connection, so that a frozen peer is told from a quiet one. */
    static final int TYPE_HEARTBEAT = 4;

    /** Ordinal byte that stands for "none" (null data type or reduction, or no operation in control frames). */
    static final int NONE = DescriptorCodec.NONE;

    /** Longest ABORT reason accepted; abort reasons are held whole, so they are bounded separately from data. */
    static final int ABORT_REASON_MAX_BYTES = 4096;

    static final int MAGIC_OFFSET = 0;
    static final int TYPE_OFFSET = 4;
    static final int OPERATION_OFFSET = 5;
    static final int DATA_TYPE_OFFSET = 6;
    static final int REDUCE_OP_OFFSET = 7;
    static final int ROOT_OFFSET = 8;
    static final int LENGTH_OFFSET = 12;
    static final int COMM_ID_OFFSET = 16;
    static final int SEQ_OFFSET = 24;
    static final int TAG_OFFSET = 32;
    static final int COUNT_OFFSET = 40;

    private Frames()
    {
    }

    /**
     * Appends a DATA header at the writer index.
     *
     * @param buf    the destination, with at least {@link #HEADER_LENGTH} writable bytes.
     * @param commId the communicator.
     * @param seq    the sequence number.
     * @param tag    the tag.
     * @param desc   the operation fingerprint.
     * @param length the payload length.
     */
    static void writeDataHeader(
        final ByteBuf buf, final long commId, final long seq, final long tag, final OpDescriptor desc, final int length)
    {
        final DataType dataType = desc.dataType();
        final ReduceOp reduceOp = desc.reduceOp();
        writeHeader(
            buf,
            TYPE_DATA,
            DescriptorCodec.code(desc.operation()),
            DescriptorCodec.code(dataType),
            DescriptorCodec.code(reduceOp),
            desc.root(),
            length,
            commId,
            seq,
            tag,
            desc.count());
    }

    /**
     * The CRC32C of a payload, as a DATA frame's trailer carries it.
     *
     * @param payload the bytes from its position to its limit; its position is left as it is.
     * @return the CRC, its 32 bits as an int.
     */
    static int checksum(final ByteBuffer payload)
    {
        final CRC32C crc = new CRC32C();
        crc.update(payload.duplicate());
        return (int)crc.getValue();
    }

    /**
     * Appends a control (ABORT or GOODBYE) header at the writer index.
     *
     * @param buf    the destination.
     * @param type   {@link #TYPE_ABORT} or {@link #TYPE_GOODBYE}.
     * @param commId the communicator an ABORT concerns; 0 for GOODBYE, which concerns the whole link.
     * @param length the payload length.
     */
    static void writeControlHeader(final ByteBuf buf, final int type, final long commId, final int length)
    {
        writeHeader(buf, type, NONE, NONE, NONE, OpDescriptor.NO_ROOT, length, commId, -1L, 0L, 0L);
    }

    /**
     * Appends a header with every field given, at the writer index. Package-private so that tests can forge
     * malformed headers.
     *
     * @param buf       the destination.
     * @param type      frame type.
     * @param operation operation code or {@link #NONE}.
     * @param dataType  data type code or {@link #NONE}.
     * @param reduceOp  reduction code or {@link #NONE}.
     * @param root      root rank.
     * @param length    payload length.
     * @param commId    communicator id.
     * @param seq       sequence number.
     * @param tag       tag.
     * @param count     count.
     */
    static void writeHeader(
        final ByteBuf buf,
        final int type,
        final int operation,
        final int dataType,
        final int reduceOp,
        final int root,
        final int length,
        final long commId,
        final long seq,
        final long tag,
        final long count)
    {
        buf.writeInt(MAGIC);
        buf.writeByte(type);
        buf.writeByte(operation);
        buf.writeByte(dataType);
        buf.writeByte(reduceOp);
        buf.writeInt(root);
        buf.writeInt(length);
        buf.writeLong(commId);
        buf.writeLong(seq);
        buf.writeLong(tag);
        buf.writeLong(count);
    }
}
