package dev.hccl.transport.netty;

import dev.hccl.api.CommConfig;
import dev.hccl.api.spi.DescriptorCodec;
import dev.hccl.api.spi.IncomingMessage;
import dev.hccl.api.spi.OpDescriptor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * The receive side of a link: a state machine over the inbound byte stream that hands payloads to
 * {@link dev.hccl.api.spi.MessageSink}s as they arrive ({@link IncomingMessage}). Only a frame header (48 bytes) is
 * ever accumulated; payload bytes go from the read buffer to the sink without an intermediate copy, so a message of
 * any size needs no buffer of its size here.
 * One inbound buffer may hold the end of one frame and any number of further frames.
 * <p>
 * Runs on the channel's event loop only; never lets an exception escape into the pipeline.
 */
final class FrameReceiver extends ChannelInboundHandlerAdapter
{
    private static final Logger LOG = LoggerFactory.getLogger(FrameReceiver.class);

    private static final int AWAIT_HEADER = 0;
    private static final int DATA_PAYLOAD = 1;
    private static final int ABORT_PAYLOAD = 2;
    /** After GOODBYE or a failure: everything that still arrives is dropped. */
    private static final int DRAINING = 3;
    /** Under HCCL_CHECKSUM: the CRC32C that follows a DATA payload. */
    private static final int DATA_CHECKSUM = 4;


    private final TcpConnection connection;
    private final TcpLink link;
    private final int rank;
    private final int peer;
    private final int maxFrameBytes;
    private final byte[] headerBytes = new byte[Frames.HEADER_LENGTH];
    /** A view of headerBytes, for a header split across reads; unpooled heap, so nothing to release. */
    private final ByteBuf headerView = Unpooled.wrappedBuffer(headerBytes);
    private int headerFill;

    private int state = AWAIT_HEADER;
    /** The DATA message whose payload is arriving. */
    private final IncomingMessage message;
    /** The CRC32C of the current payload so far under HCCL_CHECKSUM, else null: nothing is computed. */
    private final CRC32C crc;
    /** The trailer's bytes read so far, and their value. */
    private int trailerFill;
    private int trailer;
    private byte[] abortBytes;
    private int abortFill;
    private long abortCommId;
    /** Decodes headers' fingerprints, one descriptor per run of equal ones; this receiver's alone. */
    private final DescriptorCodec descriptors = new DescriptorCodec();

    FrameReceiver(final TcpConnection connection, final NettyTransport transport)
    {
        this.connection = connection;
        this.link = connection.link();
        this.rank = transport.rank();
        this.peer = link.peer();
        this.message = new IncomingMessage(transport.inbound(), peer, this::deliveryFailed);
        this.maxFrameBytes = transport.maxFrameBytes();
        this.crc = transport.checksum() ? new CRC32C() : null;
    }

    @Override
    public void channelRead(final ChannelHandlerContext ctx, final Object msg)
    {
        if (!(msg instanceof ByteBuf))
        {
            ReferenceCountUtil.release(msg);
            return;
        }
        final ByteBuf in = (ByteBuf)msg;
        connection.heard();
        try
        {
            consume(ctx, in);
        }
        catch (final Throwable t)
        {
            // Only a bug gets here: every callback into the communicator is guarded on its own.
            LOG.error("rank {}: internal error receiving from rank {}", rank, peer, t);
            state = DRAINING;
            link.fail(connection, connection.name() + " failed: internal error in the receiver: " + t, t, true);
        }
        finally
        {
            in.release();
        }
    }

    @Override
    public void channelInactive(final ChannelHandlerContext ctx)
    {
        final boolean midMessage =
            DATA_PAYLOAD == state || DATA_CHECKSUM == state || ABORT_PAYLOAD == state || headerFill > 0;
        state = DRAINING;
        message.drop();
        connection.onInactive(midMessage);
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause)
    {
        state = DRAINING;
        link.fail(connection, connection.name() + " lost: " + cause, cause, true);
    }

    private void consume(final ChannelHandlerContext ctx, final ByteBuf in)
    {
        while (in.isReadable())
        {
            switch (state)
            {
                case AWAIT_HEADER:
                    readHeader(in);
                    break;

                case DATA_PAYLOAD:
                    deliver(in);
                    break;

                case ABORT_PAYLOAD:
                    readAbortReason(in);
                    break;

                case DATA_CHECKSUM:
                    readChecksum(in);
                    break;

                default:
                    in.skipBytes(in.readableBytes());
                    return;
            }
        }
    }

    private void readHeader(final ByteBuf in)
    {
        final int readable = in.readableBytes();
        if (0 == headerFill && readable >= Frames.HEADER_LENGTH)
        {
            // Common case: the whole header is in this buffer; parse it in place.
            final int base = in.readerIndex();
            in.skipBytes(Frames.HEADER_LENGTH);
            onHeader(in, base);
        }
        else
        {
            final int n = Math.min(Frames.HEADER_LENGTH - headerFill, readable);
            in.readBytes(headerBytes, headerFill, n);
            headerFill += n;
            if (Frames.HEADER_LENGTH == headerFill)
            {
                headerFill = 0;
                onHeader(headerView, 0);
            }
        }
    }

    private void onHeader(final ByteBuf h, final int base)
    {
        final int magic = h.getInt(base + Frames.MAGIC_OFFSET);
        if (Frames.MAGIC != magic)
        {
            protocolError("bad frame magic 0x" + Integer.toHexString(magic));
            return;
        }
        final int type = h.getUnsignedByte(base + Frames.TYPE_OFFSET);
        final int length = h.getInt(base + Frames.LENGTH_OFFSET);
        if (length < 0 || length > maxFrameBytes)
        {
            protocolError("frame length " + length + " outside [0, " + maxFrameBytes + "]");
            return;
        }

        switch (type)
        {
            case Frames.TYPE_DATA:
                onDataHeader(h, base, length);
                break;

            case Frames.TYPE_ABORT:
                if (length > Frames.ABORT_REASON_MAX_BYTES)
                {
                    protocolError("ABORT reason of " + length + " bytes exceeds " + Frames.ABORT_REASON_MAX_BYTES);
                }
                else if (0 == length)
                {
                    link.onAbort(h.getLong(base + Frames.COMM_ID_OFFSET), "");
                }
                else
                {
                    abortBytes = new byte[length];
                    abortFill = 0;
                    abortCommId = h.getLong(base + Frames.COMM_ID_OFFSET);
                    state = ABORT_PAYLOAD;
                }
                break;

            case Frames.TYPE_GOODBYE:
                if (0 != length)
                {
                    protocolError("GOODBYE with a payload of " + length + " bytes");
                }
                else
                {
                    state = DRAINING;
                    connection.onGoodbye();
                }
                break;

            case Frames.TYPE_HEARTBEAT:
                if (0 != length)
                {
                    protocolError("HEARTBEAT with a payload of " + length + " bytes");
                }
                break;

            default:
                protocolError("unknown frame type " + type);
                break;
        }
    }

    private void onDataHeader(final ByteBuf h, final int base, final int length)
    {
        final int op = h.getUnsignedByte(base + Frames.OPERATION_OFFSET);
        final int dt = h.getUnsignedByte(base + Frames.DATA_TYPE_OFFSET);
        final int ro = h.getUnsignedByte(base + Frames.REDUCE_OP_OFFSET);
        final OpDescriptor desc = descriptors.decode(
            op, dt, ro, h.getInt(base + Frames.ROOT_OFFSET), h.getLong(base + Frames.COUNT_OFFSET));
        if (null == desc)
        {
            protocolError(DescriptorCodec.describeBad(op, dt, ro));
            return;
        }
        if (message.begin(h.getLong(base + Frames.COMM_ID_OFFSET), h.getLong(base + Frames.SEQ_OFFSET),
            h.getLong(base + Frames.TAG_OFFSET), desc, length))
        {
            state = DATA_PAYLOAD;
        }
    }

    private void deliver(final ByteBuf in)
    {
        final int n = Math.min(message.remaining(), in.readableBytes());
        final int index = in.readerIndex();
        // internalNioBuffer: a view the buffer keeps for reuse, so a chunk costs no allocation; the sink consumes it
        // before returning, as MessageSink's contract says.
        final boolean written = 1 == in.nioBufferCount() ? write(in.internalNioBuffer(index, n)) :
            writeAll(in.nioBuffers(index, n));
        in.skipBytes(n);
        if (!written)
        {
            return;
        }
        if (0 == message.remaining() && null != crc)
        {
            // Completed only once the CRC that follows matches.
            trailerFill = 0;
            trailer = 0;
            state = DATA_CHECKSUM;
        }
        else if (0 == message.remaining())
        {
            state = AWAIT_HEADER;
            message.complete();
        }
    }

    private boolean writeAll(final ByteBuffer[] chunks)
    {
        for (final ByteBuffer chunk : chunks)
        {
            if (!write(chunk))
            {
                return false;
            }
        }
        return true;
    }

    /** Hands a chunk to the sink, adding it to the payload's CRC first under HCCL_CHECKSUM. */
    private boolean write(final ByteBuffer chunk)
    {
        if (null != crc)
        {
            update(chunk);
        }
        return message.write(chunk.order(ByteOrder.LITTLE_ENDIAN));
    }

    /** Adds a chunk to the payload's CRC, leaving its position where it was for the sink. */
    private void update(final ByteBuffer chunk)
    {
        final int position = chunk.position();
        crc.update(chunk);
        chunk.position(position);
    }

    /**
     * Reads the CRC32C that follows a payload under HCCL_CHECKSUM, perhaps over several reads, and completes the
     * message when it matches the payload's; a mismatch fails the link, and the message is never completed.
     */
    private void readChecksum(final ByteBuf in)
    {
        while (trailerFill < Frames.CHECKSUM_LENGTH && in.isReadable())
        {
            trailer = trailer << 8 | in.readUnsignedByte();
            trailerFill++;
        }
        if (trailerFill < Frames.CHECKSUM_LENGTH)
        {
            return;
        }
        final int computed = (int)crc.getValue();
        crc.reset();
        if (computed != trailer)
        {
            state = DRAINING;
            message.drop();
            final String details = "a message of " + message.descriptor().operation().displayName() + " (sequence " +
                message.seq() + ") from rank " + peer + " does not match the CRC32C it was sent with (" +
                CommConfig.CHECKSUM + "): its bytes were changed on the way, so it is dropped";
            LOG.warn("rank {}: {}; closing the connection", rank, details);
            link.fail(connection, details, null, false);
            return;
        }
        state = AWAIT_HEADER;
        message.complete();
    }

    private void readAbortReason(final ByteBuf in)
    {
        final int n = Math.min(abortBytes.length - abortFill, in.readableBytes());
        in.readBytes(abortBytes, abortFill, n);
        abortFill += n;
        if (abortFill == abortBytes.length)
        {
            final String reason = new String(abortBytes, StandardCharsets.UTF_8);
            abortBytes = null;
            state = AWAIT_HEADER;
            link.onAbort(abortCommId, reason);
        }
    }

    private void protocolError(final String details)
    {
        state = DRAINING;
        message.drop();
        LOG.warn("rank {}: protocol error from rank {}: {}; closing the connection", rank, peer, details);
        link.fail(connection, "protocol error from rank " + peer + ": " + details, null, false);
    }

    private void deliveryFailed(final Throwable t)
    {
        state = DRAINING;
        message.drop();
        LOG.error("rank {}: the receiver failed on a message from rank {}; closing the connection", rank, peer, t);
        link.fail(connection, connection.name() + " failed: the receiver threw " + t, t, false);
    }
}
