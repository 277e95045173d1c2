package dev.hccl.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * The accepting side of the handshake: reads HELLO, checks it, replies ACK and hands the channel over to a
 * {@link FrameReceiver}, or replies REJECT and closes. Anything that is not a HELLO (wrong magic) is logged and the
 * connection closed without a reply; a connection that sends no complete HELLO within the connect timeout is closed.
 */
final class AcceptorHandshake extends ChannelInboundHandlerAdapter
{
    private static final Logger LOG = LoggerFactory.getLogger(AcceptorHandshake.class);

    private final NettyTransport transport;
    private final byte[] hello = new byte[Handshake.HELLO_LENGTH];
    private int fill;
    private boolean finished;
    private ScheduledFuture<?> timeout;

    AcceptorHandshake(final NettyTransport transport)
    {
        this.transport = transport;
    }

    @Override
    public void channelActive(final ChannelHandlerContext ctx)
    {
        final long timeoutNs = transport.connectTimeoutNs();
        timeout = ctx.executor().schedule(() ->
        {
            if (!finished)
            {
                finished = true;
                LOG.warn(
                    "rank {}: closing connection from {}: no valid HELLO within {} ms",
                    transport.rank(), ctx.channel().remoteAddress(), TimeUnit.NANOSECONDS.toMillis(timeoutNs));
                ctx.close();
            }
        }, timeoutNs, TimeUnit.NANOSECONDS);
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
            if (finished)
            {
                return;
            }
            final int n = Math.min(Handshake.HELLO_LENGTH - fill, in.readableBytes());
            in.readBytes(hello, fill, n);
            fill += n;

            // Check the magic as soon as it is here, so that garbage is dropped without waiting for the whole HELLO.
            if (fill >= 4)
            {
                final int magic = ((hello[0] & 0xFF) << 24) | ((hello[1] & 0xFF) << 16) |
                    ((hello[2] & 0xFF) << 8) | (hello[3] & 0xFF);
                if (Handshake.MAGIC != magic)
                {
                    finish();
                    LOG.warn(
                        "rank {}: closing connection from {}: not an HCCL handshake (magic 0x{})",
                        transport.rank(), ctx.channel().remoteAddress(), Integer.toHexString(magic));
                    ctx.close();
                    return;
                }
            }
            if (fill < Handshake.HELLO_LENGTH)
            {
                return;
            }

            finish();
            final Handshake.Hello h = Handshake.decodeHello(hello);
            final TcpMesh.Admission admission = transport.mesh().admit(h, ctx.channel());
            final String reason = admission.refusal();
            if (null != reason)
            {
                LOG.warn(
                    "rank {}: refused connection from {} claiming rank {}: {}",
                    transport.rank(), ctx.channel().remoteAddress(), h.rank(), reason);
                ctx.writeAndFlush(Handshake.encodeReply(
                    ctx.alloc(), Handshake.STATUS_REJECT, transport.rank(), Handshake.rejectBody(reason)))
                    .addListener(ChannelFutureListener.CLOSE);
                return;
            }

            final TcpConnection connection = admission.connection();
            final byte[] ackMac = transport.handshake().ackMac(
                transport.commId(), transport.rank(), h.rank(), transport.worldSize(), h.connection());
            ctx.writeAndFlush(Handshake.encodeReply(ctx.alloc(), Handshake.STATUS_ACK, transport.rank(), ackMac))
                .addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
            ctx.pipeline().replace(this, NettyTransport.FRAMES_HANDLER, new FrameReceiver(connection, transport));
            transport.handshakeDone(ctx.channel());
            LOG.debug("rank {}: {} accepted from {}", transport.rank(), connection.name(), ctx.channel().remoteAddress());
            if (in.isReadable())
            {
                // Frames may follow HELLO in the same read: the replaced context forwards to the receiver.
                passedOn = true;
                ctx.fireChannelRead(in);
            }
        }
        catch (final Throwable t)
        {
            finish();
            LOG.warn("rank {}: handshake with {} failed", transport.rank(), ctx.channel().remoteAddress(), t);
            ctx.close();
        }
        finally
        {
            if (!passedOn)
            {
                in.release();
            }
        }
    }

    @Override
    public void channelInactive(final ChannelHandlerContext ctx)
    {
        if (!finished)
        {
            finish();
            LOG.debug("rank {}: connection from {} closed before a HELLO", transport.rank(), ctx.channel().remoteAddress());
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause)
    {
        if (!finished)
        {
            finish();
            LOG.warn("rank {}: handshake with {} failed: {}", transport.rank(), ctx.channel().remoteAddress(), cause.toString());
        }
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
