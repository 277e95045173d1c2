package dev.hccl.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.socket.DuplexChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * One TCP connection of a {@link TcpLink}, after its handshake: its send queue and what its receiver reports. A pair
 * of ranks has {@link TcpSettings#connectionsPerPeer(int)} of them; everything about the pair as a whole
 * (its state, failures, the peer's goodbye) is the link's.
 * <p>
 * Frames are queued from any thread and written by the channel's event loop in queue order; the bytes queued and not
 * yet written are counted, so that the link can give a message to the least loaded connection.
 */
final class TcpConnection
{
    private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);

    private static final AtomicLongFieldUpdater<TcpConnection> QUEUED =
        AtomicLongFieldUpdater.newUpdater(TcpConnection.class, "queuedBytes");

    private final TcpLink link;
    private final int index;
    private final Channel channel;
    private final String name;
    /** Frames waiting for the event loop, in call order; drained by one task per batch. */
    private final Queue<PendingWrite> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drainTask = this::drain;
    private volatile long queuedBytes;
    /** DATA frames (messages) written to the socket; only the event loop writes it. */
    private volatile long messagesWritten;
    /** When bytes last came from the peer, by {@link System#nanoTime()}. */
    private volatile long lastHeardNanos = System.nanoTime();
    /** Set on the event loop when the peer's GOODBYE arrives: the close that follows is no failure. */
    private boolean peerSaidGoodbye;

    TcpConnection(final TcpLink link, final int index, final int count, final Channel channel)
    {
        this.link = link;
        this.index = index;
        this.channel = channel;
        this.name = 1 == count ? "connection to rank " + link.peer() :
            "connection " + index + " of " + count + " to rank " + link.peer();
    }

    /**
     * The pair this connection belongs to.
     *
     * @return the link.
     */
    TcpLink link()
    {
        return link;
    }

    /**
     * Which of the pair's connections this is.
     *
     * @return 0 to the pair's count - 1.
     */
    int index()
    {
        return index;
    }

    Channel channel()
    {
        return channel;
    }

    ByteBufAllocator alloc()
    {
        return channel.alloc();
    }

    /**
     * How this connection is named in messages: "connection to rank 3", or "connection 1 of 4 to rank 3".
     *
     * @return the name.
     */
    String name()
    {
        return name;
    }

    /**
     * Bytes queued on this connection and not yet handed to the socket.
     *
     * @return bytes.
     */
    long queuedBytes()
    {
        return queuedBytes;
    }

    /**
     * Messages (DATA frames) this connection has handed to its socket. Control frames are not counted: a heartbeat
     * goes on every connection idle for a second, however many messages there were.
     *
     * @return the count.
     */
    long messagesWritten()
    {
        return messagesWritten;
    }

    /**
     * Queues a frame behind every frame queued before it; {@code done} is told when it has been written or failed.
     * Takes ownership of {@code frame}.
     *
     * @param frame the frame.
     * @param done  told of the write's outcome.
     */
    void enqueue(final ByteBuf frame, final ChannelFutureListener done)
    {
        final PendingWrite write = new PendingWrite(frame, done);
        QUEUED.addAndGet(this, write.bytes);
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
     * Bytes came from the peer: it is alive.
     */
    void heard()
    {
        lastHeardNanos = System.nanoTime();
    }

    /**
     * How long the peer has been silent.
     *
     * @param nowNanos now, by {@link System#nanoTime()}.
     * @return nanoseconds since bytes last came.
     */
    long silentNanos(final long nowNanos)
    {
        return nowNanos - lastHeardNanos;
    }

    /**
     * Queues a HEARTBEAT when nothing else is queued: a frame already waiting tells the peer as much, and a peer that
     * reads nothing must not make heartbeats pile up.
     */
    void heartbeat()
    {
        if (0 != queuedBytes || !channel.isActive())
        {
            return;
        }
        final ByteBuf frame = alloc().directBuffer(Frames.HEADER_LENGTH);
        Frames.writeControlHeader(frame, Frames.TYPE_HEARTBEAT, 0L, 0);
        enqueue(frame, f -> { });
    }

    /**
     * Writes GOODBYE behind every queued frame, then half-closes: the peer closes its side on GOODBYE, which closes
     * the channel here. Closes at once when the channel is not active.
     *
     * @return the channel's close future.
     */
    ChannelFuture sayGoodbye()
    {
        if (!channel.isActive())
        {
            return channel.close();
        }
        try
        {
            final ByteBuf frame = alloc().directBuffer(Frames.HEADER_LENGTH);
            Frames.writeControlHeader(frame, Frames.TYPE_GOODBYE, 0L, 0);
            enqueue(frame, f ->
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
            });
        }
        catch (final Throwable t)
        {
            channel.close();
        }
        return channel.closeFuture();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // What the receiver reports, on the event loop.

    /**
     * The peer said GOODBYE on this connection: nothing more comes on it.
     */
    void onGoodbye()
    {
        peerSaidGoodbye = true;
        link.onGoodbye(this);
        // The peer reads nothing more that matters: closing our side too lets its close() finish at once.
        channel.close();
    }

    /**
     * The channel became inactive. Called once.
     *
     * @param midMessage true if a message was partly received.
     */
    void onInactive(final boolean midMessage)
    {
        try
        {
            if (!peerSaidGoodbye)
            {
                link.fail(this, name + " lost: closed by the peer without goodbye" +
                    (midMessage ? " in the middle of a message" : ""), null, true);
            }
        }
        finally
        {
            link.connectionTerminated();
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

    @Override
    public String toString()
    {
        return name + " (" + channel + ")";
    }

    /**
     * A frame in the send queue, and what to do when its write finishes.
     */
    private final class PendingWrite implements ChannelFutureListener
    {
        final ByteBuf frame;
        final int bytes;
        private final boolean message;
        private final ChannelFutureListener done;

        PendingWrite(final ByteBuf frame, final ChannelFutureListener done)
        {
            this.frame = frame;
            this.bytes = frame.readableBytes();
            this.message = Frames.TYPE_DATA == frame.getUnsignedByte(frame.readerIndex() + Frames.TYPE_OFFSET);
            this.done = done;
        }

        @Override
        public void operationComplete(final ChannelFuture future)
        {
            QUEUED.addAndGet(TcpConnection.this, -bytes);
            if (message && future.isSuccess())
            {
                messagesWritten++; // on the event loop only
            }
            try
            {
                done.operationComplete(future);
            }
            catch (final Exception ex)
            {
                LOG.debug("after a frame on {}", TcpConnection.this, ex);
            }
        }
    }
}
