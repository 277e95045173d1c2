package dev.hccl.transport.netty;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.socket.DuplexChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The TCP connection to one peer, after a successful handshake. Sends come from communicator threads; everything
 * else (receives, failures) happens on the channel's event loop.
 * <p>
 * A link is OPEN until exactly one of: it fails (reported once to {@link Inbound#onLinkFailure}), the peer says
 * GOODBYE (reported to {@link Inbound#onPeerClosed}), or this side closes it. Sends on a link that is not OPEN fail
 * at once.
 */
final class TcpLink implements Link
{
    private static final Logger LOG = LoggerFactory.getLogger(TcpLink.class);

    /**
     * Payloads up to this size are copied into the header's buffer: one small copy is cheaper than wrapping the
     * payload in its own buffer and a composite, and it makes the send a single contiguous write.
     */
    static final int INLINE_PAYLOAD_MAX_BYTES = 1024;

    static final int OPEN = 0;
    static final int PEER_CLOSED = 1;
    static final int FAILED = 2;
    static final int CLOSED = 3;

    private static final AtomicIntegerFieldUpdater<TcpLink> STATE =
        AtomicIntegerFieldUpdater.newUpdater(TcpLink.class, "state");

    private final NettyTransport transport;
    private final Inbound inbound;
    private final int rank;
    private final int peer;
    private final Channel channel;
    private final ByteBufAllocator alloc;
    private final int maxFrameBytes;
    private final CountDownLatch terminated = new CountDownLatch(1);
    /** Frames waiting for the event loop, in call order; drained by one task per batch. */
    private final Queue<PendingWrite> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drainTask = this::drain;
    private volatile int state = OPEN;
    private volatile HcclException failure;
    private volatile String failureMessage;

    TcpLink(final NettyTransport transport, final int peer, final Channel channel)
    {
        this.transport = transport;
        this.inbound = transport.inbound();
        this.rank = transport.rank();
        this.peer = peer;
        this.channel = channel;
        this.alloc = channel.alloc();
        this.maxFrameBytes = transport.maxFrameBytes();
    }

    /**
     * {@inheritDoc}
     */
    @Override
    public int peer()
    {
        return peer;
    }

    /**
     * {@inheritDoc}
     * <p>
     * The payload is written without a copy (payloads up to {@value #INLINE_PAYLOAD_MAX_BYTES} bytes are copied into
     * the header's buffer); {@code done} completes on the event loop once the bytes are in the socket's send buffer,
     * and fails with {@link ErrorCode#E_TCP_TRANSFER} if the link fails first. Sends on one link reach the peer in
     * the order of the calls.
     */
    @Override
    public void send(
        final long commId,
        final long seq,
        final long tag,
        final OpDescriptor desc,
        final ByteBuffer payload,
        final Request done)
    {
        if (OPEN != state)
        {
            done.fail(notOpen());
            return;
        }

        final int length = payload.remaining();
        if (length > maxFrameBytes)
        {
            done.fail(new HcclException(
                ErrorCode.E_PARA, rank, peer, desc.operation(), seq,
                "message of " + length + " bytes to rank " + peer + " exceeds maxFrameBytes " + maxFrameBytes,
                null));
            return;
        }

        ByteBuf frame = null;
        try
        {
            if (length <= INLINE_PAYLOAD_MAX_BYTES)
            {
                frame = alloc.directBuffer(Frames.HEADER_LENGTH + length);
                Frames.writeDataHeader(frame, commId, seq, tag, desc, length);
                if (length > 0)
                {
                    // duplicate(): writeBytes moves the source's position, and the caller's must not change.
                    frame.writeBytes(payload.duplicate());
                }
            }
            else
            {
                final ByteBuf header = alloc.directBuffer(Frames.HEADER_LENGTH);
                Frames.writeDataHeader(header, commId, seq, tag, desc, length);
                // The wrapper does not own the memory: releasing it after the write leaves the payload alone.
                frame = Unpooled.wrappedUnmodifiableBuffer(header, Unpooled.wrappedBuffer(payload.duplicate()));
            }
            final PendingWrite write = new SendWrite(frame, this, done);
            frame = null; // owned by the queue from here on
            enqueue(write);
        }
        catch (final Throwable t)
        {
            if (null != frame)
            {
                frame.release();
            }
            done.fail(sendFailure(t));
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * Best effort: the frame is dropped if the link is not open; the reason is cut to
     * {@value Frames#ABORT_REASON_MAX_BYTES} bytes.
     */
    @Override
    public void abort(final long commId, final String reason)
    {
        if (OPEN != state)
        {
            return;
        }
        byte[] bytes = (null == reason ? "" : reason).getBytes(StandardCharsets.UTF_8);
        if (bytes.length > Frames.ABORT_REASON_MAX_BYTES)
        {
            final byte[] cut = new byte[Frames.ABORT_REASON_MAX_BYTES];
            System.arraycopy(bytes, 0, cut, 0, cut.length);
            bytes = cut;
        }
        try
        {
            final ByteBuf frame = alloc.directBuffer(Frames.HEADER_LENGTH + bytes.length);
            Frames.writeControlHeader(frame, Frames.TYPE_ABORT, commId, bytes.length);
            frame.writeBytes(bytes);
            enqueue(new ControlWrite(frame, null));
        }
        catch (final Throwable t)
        {
            LOG.debug("rank {}: could not send ABORT to rank {}", rank, peer, t);
        }
    }

    @Override
    public String toString()
    {
        return "TcpLink{rank " + rank + " -> rank " + peer + ", " + channel + ", state " + state + "}";
    }

    /**
     * Test hook: counted down once the channel's inactivity has been handled.
     *
     * @return the latch.
     */
    CountDownLatch terminated()
    {
        return terminated;
    }

    /**
     * The peer said GOODBYE. Called on the event loop.
     */
    void onGoodbye()
    {
        if (STATE.compareAndSet(this, OPEN, PEER_CLOSED))
        {
            LOG.debug("rank {}: rank {} said goodbye", rank, peer);
            try
            {
                inbound.onPeerClosed(peer);
            }
            catch (final Throwable t)
            {
                LOG.error("rank {}: Inbound.onPeerClosed({}) threw", rank, peer, t);
            }
            // The peer reads nothing more that matters: closing our side too lets its close() finish at once.
            channel.close();
        }
    }

    /**
     * The peer sent ABORT. Called on the event loop.
     *
     * @param reason its reason.
     */
    void onAbort(final long commId, final String reason)
    {
        if (OPEN == state && !transport.isClosing())
        {
            try
            {
                inbound.onAbort(peer, commId, reason);
            }
            catch (final Throwable t)
            {
                LOG.error("rank {}: Inbound.onAbort({}) threw", rank, peer, t);
            }
        }
    }

    /**
     * The link failed: reports it once (unless this side is closing), then closes the channel.
     *
     * @param message what happened, in words.
     * @param cause   the underlying cause, or null.
     */
    void fail(final String message, final Throwable cause)
    {
        fail(message, cause, true);
    }

    /**
     * The link failed: reports it once (unless this side is closing), then closes the channel.
     *
     * @param message what happened, in words.
     * @param cause   the underlying cause, or null.
     * @param log     false when the caller has logged it already.
     */
    void fail(final String message, final Throwable cause, final boolean log)
    {
        if (STATE.compareAndSet(this, OPEN, FAILED))
        {
            final HcclException ex = new HcclException(
                ErrorCode.E_TCP_TRANSFER, rank, peer, null, HcclException.NO_SEQUENCE, message, cause);
            failureMessage = message;
            failure = ex;
            if (!transport.isClosing())
            {
                if (log)
                {
                    LOG.warn("rank {}: {}", rank, message);
                }
                try
                {
                    inbound.onLinkFailure(peer, ex);
                }
                catch (final Throwable t)
                {
                    LOG.error("rank {}: Inbound.onLinkFailure({}) threw", rank, peer, t);
                }
            }
        }
        channel.close();
    }

    /**
     * The channel became inactive. Called on the event loop, once.
     *
     * @param midMessage true if a message was partly received.
     */
    void onInactive(final boolean midMessage)
    {
        try
        {
            fail(
                "connection to rank " + peer + " lost: closed by the peer without goodbye" +
                (midMessage ? " in the middle of a message" : ""),
                null);
        }
        finally
        {
            terminated.countDown();
        }
    }

    /**
     * Closes in good order: GOODBYE after any queued sends, then a half-close of our output; the peer closes its side
     * on GOODBYE, which closes the channel here.
     *
     * @return the channel's close future.
     */
    ChannelFuture closeOrderly()
    {
        final int previous = STATE.getAndSet(this, CLOSED);
        if (OPEN != previous || !channel.isActive())
        {
            return channel.close();
        }
        try
        {
            final ByteBuf frame = alloc.directBuffer(Frames.HEADER_LENGTH);
            Frames.writeControlHeader(frame, Frames.TYPE_GOODBYE, 0L, 0);
            // Through the send queue, so that GOODBYE follows every send made before close().
            enqueue(new ControlWrite(frame, f ->
            {
                if (f.isSuccess() && channel instanceof DuplexChannel)
                {
                    // Half-close rather than close: data from the peer still in flight must not turn into a reset
                    // that could destroy our GOODBYE before the peer reads it.
                    ((DuplexChannel)channel).shutdownOutput();
                }
                else
                {
                    channel.close();
                }
            }));
        }
        catch (final Throwable t)
        {
            channel.close();
        }
        return channel.closeFuture();
    }

    /**
     * Test hook: closes the channel without GOODBYE, as a crashed process would.
     */
    void closeAbruptly()
    {
        STATE.set(this, CLOSED);
        channel.close();
    }

    HcclException sendFailure(final Throwable cause)
    {
        final String message = failureMessage;
        return new HcclException(
            ErrorCode.E_TCP_TRANSFER, rank, peer, null, HcclException.NO_SEQUENCE,
            "send to rank " + peer + " failed: " + (null != message ? message : String.valueOf(cause)),
            null != cause ? cause : failure);
    }

    private HcclException notOpen()
    {
        final String why;
        switch (state)
        {
            case PEER_CLOSED:
                why = "rank " + peer + " has closed its side";
                break;
            case FAILED:
                why = "the connection failed";
                break;
            default:
                why = "the link is closed";
                break;
        }
        return new HcclException(
            ErrorCode.E_TCP_TRANSFER, rank, peer, null, HcclException.NO_SEQUENCE,
            "cannot send to rank " + peer + ": " + why, failure);
    }

    private void enqueue(final PendingWrite write)
    {
        pending.offer(write);
        if (drainScheduled.compareAndSet(false, true))
        {
            try
            {
                channel.eventLoop().execute(drainTask);
            }
            catch (final RejectedExecutionException ex)
            {
                // The I/O threads have stopped: nothing will ever drain the queue, so fail what is in it.
                drainScheduled.set(false);
                PendingWrite w;
                while (null != (w = pending.poll()))
                {
                    w.frame.release();
                    w.operationComplete(channel.newFailedFuture(ex));
                }
            }
        }
    }

    /**
     * Runs on the event loop: writes every queued frame, then flushes once, so that a burst of small sends costs one
     * wake-up and one system call rather than one each.
     */
    private void drain()
    {
        // Reset before polling: a frame offered after this point schedules another drain, so none is stranded.
        drainScheduled.set(false);
        PendingWrite w;
        boolean wrote = false;
        while (null != (w = pending.poll()))
        {
            channel.write(w.frame).addListener(w);
            wrote = true;
        }
        if (wrote)
        {
            channel.flush();
        }
    }

    /**
     * A frame in the send queue, and what to do when its write finishes.
     */
    private abstract static class PendingWrite implements ChannelFutureListener
    {
        final ByteBuf frame;

        PendingWrite(final ByteBuf frame)
        {
            this.frame = frame;
        }

        @Override
        public abstract void operationComplete(ChannelFuture future);
    }

    /**
     * A DATA frame: completes or fails the send's request.
     */
    private static final class SendWrite extends PendingWrite
    {
        private final TcpLink link;
        private final Request done;

        SendWrite(final ByteBuf frame, final TcpLink link, final Request done)
        {
            super(frame);
            this.link = link;
            this.done = done;
        }

        @Override
        public void operationComplete(final ChannelFuture future)
        {
            if (future.isSuccess())
            {
                done.complete();
            }
            else
            {
                done.fail(link.sendFailure(future.cause()));
            }
        }
    }

    /**
     * An ABORT or GOODBYE frame, with an optional follow-up.
     */
    private static final class ControlWrite extends PendingWrite
    {
        private final ChannelFutureListener then;

        ControlWrite(final ByteBuf frame, final ChannelFutureListener then)
        {
            super(frame);
            this.then = then;
        }

        @Override
        public void operationComplete(final ChannelFuture future)
        {
            if (null != then)
            {
                try
                {
                    then.operationComplete(future);
                }
                catch (final Exception ex)
                {
                    LOG.debug("after a control frame to {}", future.channel(), ex);
                }
            }
        }
    }
}
