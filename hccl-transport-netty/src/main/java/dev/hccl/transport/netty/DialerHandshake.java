package dev.hccl.transport.netty;

import dev.hccl.api.spi.JobKey;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The dialing side of the handshake: sends HELLO once connected, answers the acceptor's CHALLENGE with its proof,
 * checks the acceptor's proof in its ACK and then hands the channel over to a {@link FrameReceiver}. Outcomes are
 * reported to the {@link Dialer} that made the connection.
 */
final class DialerHandshake extends ChannelInboundHandlerAdapter
{
    private static final Logger LOG = LoggerFactory.getLogger(DialerHandshake.class);

    private final NettyTransport transport;
    private final Dialer dialer;
    private final byte[] fixed = new byte[Handshake.REPLY_FIXED_LENGTH];
    private int fixedFill;
    private byte[] body;
    private int bodyFill;
    private Handshake.Hello hello;
    /** The acceptor's nonce, once its CHALLENGE came and this side's proof went: the next reply is the verdict. */
    private byte[] acceptorNonce;
    private boolean finished;
    private ScheduledFuture<?> timeout;

    DialerHandshake(final NettyTransport transport, final Dialer dialer)
    {
        this.transport = transport;
        this.dialer = dialer;
    }

    @Override
    public void channelActive(final ChannelHandlerContext ctx)
    {
        final byte[] bytes = Handshake.encodeHello(transport.commId(), transport.rank(), transport.worldSize(),
            dialer.connection(), transport.connectionsPerPeer(), JobKey.nonce());
        hello = Handshake.decodeHello(bytes);
        ctx.writeAndFlush(Unpooled.wrappedBuffer(bytes));
        final long waitNs = Math.max(1, dialer.nanosLeft());
        timeout = ctx.executor().schedule(() ->
        {
            if (!finished)
            {
                finished = true;
                dialer.handshakeTimedOut();
                ctx.close();
            }
        }, waitNs, TimeUnit.NANOSECONDS);
        ctx.fireChannelActive();
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
        boolean passedOn = false;
        try
        {
            while (!finished && in.isReadable())
            {
                if (!readReply(ctx, in))
                {
                    return;
                }
                final ByteBuffer bb = ByteBuffer.wrap(fixed);
                bb.position(6);
                final byte status = bb.get();
                final int peerRank = bb.getInt();
                fixedFill = 0;
                bodyFill = 0;
                if (Handshake.STATUS_REJECT == status)
                {
                    fatal(ctx, "rejected: " + new String(body, StandardCharsets.UTF_8));
                    return;
                }
                if (peerRank != dialer.peer())
                {
                    fatal(ctx, "the listener at " + dialer.address() + " is rank " + peerRank + ", not rank " +
                        dialer.peer());
                    return;
                }
                if (null == acceptorNonce)
                {
                    if (Handshake.STATUS_CHALLENGE != status || Handshake.CHALLENGE_BODY_LENGTH != body.length)
                    {
                        fatal(ctx, "malformed handshake reply (status " + status + ", " + body.length +
                            " bytes where a challenge was due)");
                        return;
                    }
                    acceptorNonce = body.clone();
                    ctx.writeAndFlush(Unpooled.wrappedBuffer(
                        transport.handshake().dialerProof(hello, peerRank, acceptorNonce)));
                    continue;
                }
                if (Handshake.STATUS_ACK != status || Handshake.ACK_BODY_LENGTH != body.length)
                {
                    fatal(ctx, "malformed handshake reply (status " + status + ", " + body.length +
                        " bytes where the verdict was due)");
                    return;
                }
                if (!transport.handshake().verifyAcceptor(hello, peerRank, acceptorNonce, body))
                {
                    fatal(ctx, "rejected: rank " + peerRank + " failed authentication (job token mismatch)");
                    return;
                }
                finish();
                final TcpConnection connection =
                    transport.mesh().registerDialed(dialer.peer(), dialer.connection(), ctx.channel());
                if (null == connection)
                {
                    ctx.close();
                    return;
                }
                ctx.pipeline().replace(this, NettyTransport.FRAMES_HANDLER, new FrameReceiver(connection, transport));
                transport.handshakeDone(ctx.channel());
                LOG.debug("rank {}: {} at {} is up", transport.rank(), connection.name(), dialer.address());
                if (in.isReadable())
                {
                    // The acceptor may send frames right behind its ACK: forward them to the receiver.
                    passedOn = true;
                    ctx.fireChannelRead(in);
                }
            }
        }
        catch (final Throwable t)
        {
            if (!finished)
            {
                fatal(ctx, "handshake failed: " + t);
            }
            else
            {
                LOG.error("rank {}: internal error after the handshake with rank {}", transport.rank(), dialer.peer(), t);
                ctx.close();
            }
        }
        finally
        {
            if (!passedOn)
            {
                in.release();
            }
        }
    }

    /**
     * Reads the next reply's bytes from {@code in}.
     *
     * @return whether the reply is whole ({@link #fixed} and {@link #body}); false when more bytes are due or the
     * reply is malformed (then the attempt has failed).
     */
    private boolean readReply(final ChannelHandlerContext ctx, final ByteBuf in)
    {
        if (fixedFill < Handshake.REPLY_FIXED_LENGTH)
        {
            final int n = Math.min(Handshake.REPLY_FIXED_LENGTH - fixedFill, in.readableBytes());
            in.readBytes(fixed, fixedFill, n);
            fixedFill += n;
            if (fixedFill < Handshake.REPLY_FIXED_LENGTH)
            {
                return false;
            }
            final ByteBuffer bb = ByteBuffer.wrap(fixed);
            final int magic = bb.getInt();
            final int version = bb.getShort() & 0xFFFF;
            bb.get();
            bb.getInt();
            final int bodyLength = bb.getShort() & 0xFFFF;
            if (Handshake.MAGIC != magic)
            {
                fatal(ctx, "not an HCCL peer (reply magic 0x" + Integer.toHexString(magic) + ")");
                return false;
            }
            if (Handshake.VERSION != version)
            {
                fatal(ctx, "protocol version " + version + ", this rank speaks " + Handshake.VERSION);
                return false;
            }
            if (bodyLength > Handshake.REPLY_BODY_MAX)
            {
                fatal(ctx, "malformed handshake reply (body of " + bodyLength + " bytes)");
                return false;
            }
            body = new byte[bodyLength];
            bodyFill = 0;
        }
        final int n = Math.min(body.length - bodyFill, in.readableBytes());
        in.readBytes(body, bodyFill, n);
        bodyFill += n;
        return bodyFill == body.length;
    }

    @Override
    public void channelInactive(final ChannelHandlerContext ctx)
    {
        if (!finished)
        {
            finish();
            dialer.attemptFailed("closed by " + dialer.address() + " during the handshake", null);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause)
    {
        if (!finished)
        {
            finish();
            dialer.attemptFailed("handshake with " + dialer.address() + " failed: " + cause, cause);
        }
        ctx.close();
    }

    private void fatal(final ChannelHandlerContext ctx, final String status)
    {
        finish();
        dialer.rejected(status);
        ctx.close();
    }

    private void finish()
    {
        finished = true;
        if (null != timeout)
        {
            timeout.cancel(false);
        }
    }
}
