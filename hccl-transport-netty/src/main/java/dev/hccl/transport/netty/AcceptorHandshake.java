package dev.hccl.transport.netty;

import dev.hccl.api.spi.JobKey;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The accepting side of the handshake: reads HELLO, answers CHALLENGE with its nonce and proof, reads the dialer's
 * proof, checks it and the HELLO, replies ACK and hands the channel over to a {@link FrameReceiver}, or replies
 * REJECT and closes. Anything that is not a HELLO (wrong magic) is logged and the connection closed without a reply;
 * a connection that does not complete the handshake within the connect timeout is closed.
 */
final class AcceptorHandshake extends ChannelInboundHandlerAdapter
{
    private static final Logger LOG = LoggerFactory.getLogger(AcceptorHandshake.class);
    /** A real dialer sends HELLO and its proof at once; a connection that dawdles longer is not one. */
    static final long HANDSHAKE_MAX_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** At most one WARN a second about connections turned away, process-wide: a flood must not flood the log. */
    private static final long WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final AtomicLong LAST_WARN = new AtomicLong(System.nanoTime() - WARN_INTERVAL_NANOS);

    private final NettyTransport transport;
    private final byte[] hello = new byte[Handshake.HELLO_LENGTH];
    private int fill;
    /** The HELLO, once read and answered with a CHALLENGE; then the dialer's proof is due. */
    private Handshake.Hello challenged;
    private byte[] nonce;
    private final byte[] proof = new byte[Handshake.PROOF_LENGTH];
    private int proofFill;
    private boolean finished;
    private ScheduledFuture<?> timeout;

    AcceptorHandshake(final NettyTransport transport)
    {
        this.transport = transport;
    }

    @Override
    public void channelActive(final ChannelHandlerContext ctx)
    {
        final long timeoutNs = Math.min(transport.connectTimeoutNs(), HANDSHAKE_MAX_NANOS);
        timeout = ctx.executor().schedule(() ->
        {
            if (!finished)
            {
                finished = true;
                warnSometimes(
                    "rank {}: closing connection from {}: no complete handshake within {} ms",
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
            if (null == challenged)
            {
                final int n = Math.min(Handshake.HELLO_LENGTH - fill, in.readableBytes());
                in.readBytes(hello, fill, n);
                fill += n;
                // Check the magic as soon as it is here, so that garbage is dropped without waiting for the rest.
                if (fill >= 4)
                {
                    final int magic = ((hello[0] & 0xFF) << 24) | ((hello[1] & 0xFF) << 16) |
                        ((hello[2] & 0xFF) << 8) | (hello[3] & 0xFF);
                    if (Handshake.MAGIC != magic)
                    {
                        finish();
                        warnSometimes(
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
                final Handshake.Hello h = Handshake.decodeHello(hello);
                if (Handshake.VERSION != h.version())
                {
                    reject(ctx, h, "protocol version " + h.version() + ", this rank speaks " + Handshake.VERSION);
                    return;
                }
                challenged = h;
                nonce = JobKey.nonce();
                ctx.writeAndFlush(
                    Handshake.encodeReply(ctx.alloc(), Handshake.STATUS_CHALLENGE, transport.rank(), nonce))
                    .addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
            }
            final int n = Math.min(Handshake.PROOF_LENGTH - proofFill, in.readableBytes());
            in.readBytes(proof, proofFill, n);
            proofFill += n;
            if (proofFill < Handshake.PROOF_LENGTH)
            {
                return;
            }

            finish();
            final Handshake.Hello h = challenged;
            final boolean proven = transport.handshake().verifyDialer(h, transport.rank(), nonce, proof);
            final TcpMesh.Admission admission = transport.mesh().admit(h, proven, ctx.channel());
            final String reason = admission.refusal();
            if (null != reason)
            {
                reject(ctx, h, reason);
                return;
            }

            final TcpConnection connection = admission.connection();
            final byte[] acceptorProof = transport.handshake().acceptorProof(h, transport.rank(), nonce);
            ctx.writeAndFlush(Handshake.encodeReply(ctx.alloc(), Handshake.STATUS_ACK, transport.rank(), acceptorProof))
                .addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
            ctx.pipeline().replace(this, NettyTransport.FRAMES_HANDLER, new FrameReceiver(connection, transport));
            transport.handshakeDone(ctx.channel());
            LOG.debug("rank {}: {} accepted from {}", transport.rank(), connection.name(), ctx.channel().remoteAddress());
            if (in.isReadable())
            {
                // Frames may follow the proof in the same read: the replaced context forwards to the receiver.
                passedOn = true;
                ctx.fireChannelRead(in);
            }
        }
        catch (final Throwable t)
        {
            finish();
            warnSometimes("rank {}: handshake with {} failed", transport.rank(), ctx.channel().remoteAddress(), t);
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
            warnSometimes("rank {}: handshake with {} failed: {}", transport.rank(), ctx.channel().remoteAddress(),
                cause.toString());
        }
        ctx.close();
    }

    private void reject(final ChannelHandlerContext ctx, final Handshake.Hello h, final String reason)
    {
        finish();
        warnSometimes("rank {}: refused connection from {} claiming rank {}: {}", transport.rank(),
            ctx.channel().remoteAddress(), h.rank(), reason);
        ctx.writeAndFlush(Handshake.encodeReply(
            ctx.alloc(), Handshake.STATUS_REJECT, transport.rank(), Handshake.rejectBody(reason)))
            .addListener(ChannelFutureListener.CLOSE);
    }

    private void finish()
    {
        finished = true;
        if (null != timeout)
        {
            timeout.cancel(false);
        }
    }

    /** A WARN, unless one went out in the last second. */
    private static void warnSometimes(final String format, final Object... args)
    {
        final long now = System.nanoTime();
        final long last = LAST_WARN.get();
        if (now - last >= WARN_INTERVAL_NANOS && LAST_WARN.compareAndSet(last, now))
        {
            LOG.warn(format, args);
        }
        else
        {
            LOG.debug(format, args);
        }
    }
}
