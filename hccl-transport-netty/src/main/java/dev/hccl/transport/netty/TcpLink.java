package dev.hccl.transport.netty;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.LinkState;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceArray;

import static dev.hccl.api.spi.LinkState.CLOSED;
import static dev.hccl.api.spi.LinkState.FAILED;
import static dev.hccl.api.spi.LinkState.OPEN;
import static dev.hccl.api.spi.LinkState.PEER_CLOSED;

/**
 * The link to one peer over TCP: {@link TcpSettings#connectionsPerPeer(int)} connections, each a
 * {@link TcpConnection}, used as one. Sends come from communicator threads; everything else (receives, failures)
 * happens on the connections' event loops.
 * <p>
 * <b>Spreading.</b> Each message goes whole on one connection: the one with the fewest bytes queued, ties going
 * round the connections. The pieces of a large transfer (segments, each a message of its own) thus travel side by
 * side. Messages on one connection arrive in the order they were sent; messages on different connections may not,
 * which the receiver's matching by sequence number and tag does not mind.
 * <p>
 * <b>State.</b> A link is OPEN until exactly one of: any of its connections fails (reported once to
 * {@link Inbound#onLinkFailure}, and every connection is closed), the peer has said GOODBYE on every connection
 * (reported to {@link Inbound#onPeerClosed}: each GOODBYE follows everything sent on its connection, so nothing from
 * the peer is still on its way), or this side closes it. Sends on a link that is not OPEN fail at once.
 */
final class TcpLink implements Link
{
    private static final Logger LOG = LoggerFactory.getLogger(TcpLink.class);

    /**
     * Payloads up to this size are copied into the header's buffer: one small copy is cheaper than wrapping the
     * payload in its own buffer and a composite, and it makes the send a single contiguous write.
     */
    static final int INLINE_PAYLOAD_MAX_BYTES = 1024;

    private static final AtomicIntegerFieldUpdater<TcpLink> STATE =
        AtomicIntegerFieldUpdater.newUpdater(TcpLink.class, "state");

    private final NettyTransport transport;
    private final Inbound inbound;
    private final int rank;
    private final int peer;
    private final int maxFrameBytes;
    /** Whether DATA frames with a payload carry its CRC32C ({@code HCCL_CHECKSUM}). */
    private final boolean checksum;
    /** The connections by index; a slot is filled once, when that connection's handshake succeeds. */
    private final AtomicReferenceArray<TcpConnection> connections;
    private final AtomicInteger goodbyes = new AtomicInteger();
    /** Counted down as each connection's inactivity has been handled. */
    private final CountDownLatch terminated;
    /** Where the search for the least loaded connection starts: advanced by each send, races harmless. */
    private int nextStart;
    private volatile int state = OPEN;
    private volatile HcclException failure;
    private volatile String failureMessage;

    TcpLink(final NettyTransport transport, final int peer, final int connectionCount)
    {
        this.transport = transport;
        this.inbound = transport.inbound();
        this.rank = transport.rank();
        this.peer = peer;
        this.maxFrameBytes = transport.maxFrameBytes();
        this.checksum = transport.checksum();
        this.connections = new AtomicReferenceArray<>(connectionCount);
        this.terminated = new CountDownLatch(connectionCount);
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
     * the header's buffer), on the least loaded connection; {@code done} completes on the event loop once the bytes
     * are in the socket's send buffer, and fails with {@link ErrorCode#E_TCP_TRANSFER} if the link fails first.
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

        final TcpConnection connection = leastLoaded();
        final ByteBufAllocator alloc = connection.alloc();
        // Under HCCL_CHECKSUM, a payload is followed by its CRC32C (Frames); else nothing is computed or added.
        final int trailer = checksum && length > 0 ? Frames.CHECKSUM_LENGTH : 0;
        ByteBuf frame = null;
        try
        {
            if (length <= INLINE_PAYLOAD_MAX_BYTES)
            {
                frame = alloc.directBuffer(Frames.HEADER_LENGTH + length + trailer);
                Frames.writeDataHeader(frame, commId, seq, tag, desc, length);
                if (length > 0)
                {
                    // duplicate(): writeBytes moves the source's position, and the caller's must not change.
                    frame.writeBytes(payload.duplicate());
                }
                if (0 != trailer)
                {
                    frame.writeInt(Frames.checksum(payload));
                }
            }
            else
            {
                final ByteBuf header = alloc.directBuffer(Frames.HEADER_LENGTH);
                Frames.writeDataHeader(header, commId, seq, tag, desc, length);
                // The wrapper does not own the memory: releasing it after the write leaves the payload alone.
                final ByteBuf body = Unpooled.wrappedBuffer(payload.duplicate());
                frame = 0 == trailer ? Unpooled.wrappedUnmodifiableBuffer(header, body) :
                    Unpooled.wrappedUnmodifiableBuffer(header, body, checksumTrailer(alloc, payload));
            }
            final ByteBuf queued = frame;
            frame = null; // owned by the connection's queue from here on
            connection.enqueue(queued, f ->
            {
                if (f.isSuccess())
                {
                    done.complete();
                }
                else
                {
                    done.fail(sendFailure(f.cause()));
                }
            });
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

    /** The CRC32C trailer of a payload, in a buffer of its own. */
    private static ByteBuf checksumTrailer(final ByteBufAllocator alloc, final ByteBuffer payload)
    {
        final ByteBuf trailer = alloc.directBuffer(Frames.CHECKSUM_LENGTH);
        trailer.writeInt(Frames.checksum(payload));
        return trailer;
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
            final TcpConnection connection = leastLoaded();
            final ByteBuf frame = connection.alloc().directBuffer(Frames.HEADER_LENGTH + bytes.length);
            Frames.writeControlHeader(frame, Frames.TYPE_ABORT, commId, bytes.length);
            frame.writeBytes(bytes);
            connection.enqueue(frame, f ->
            {
            });
        }
        catch (final Throwable t)
        {
            LOG.debug("rank {}: could not send ABORT to rank {}", rank, peer, t);
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * The least silence of its connections: bytes or a heartbeat on any of them show the peer alive.
     */
    @Override
    public long silentMillis()
    {
        final long now = System.nanoTime();
        long least = -1;
        for (int i = 0; i < connections.length(); i++)
        {
            final TcpConnection c = connections.get(i);
            if (null != c)
            {
                final long silent = c.silentNanos(now) / 1_000_000;
                least = least < 0 ? silent : Math.min(least, silent);
            }
        }
        return least;
    }

    @Override
    public String toString()
    {
        return "TcpLink{rank " + rank + " -> rank " + peer + ", " + connections.length() + " connection" +
            (1 == connections.length() ? "" : "s") + ", state " + state + "}";
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Building, under the transport's lock.

    /**
     * Adds a connection whose handshake succeeded.
     *
     * @param index   which connection of the pair.
     * @param channel its channel.
     * @return the connection.
     */
    TcpConnection attach(final int index, final Channel channel)
    {
        final TcpConnection connection = new TcpConnection(this, index, connections.length(), channel);
        connections.set(index, connection);
        if (OPEN != state)
        {
            // The link failed or closed while this connection was in its handshake: it must not stay open.
            channel.close();
        }
        return connection;
    }

    /**
     * Whether connection {@code index} has been added.
     *
     * @param index which connection.
     * @return true once its handshake succeeded.
     */
    boolean has(final int index)
    {
        return null != connections.get(index);
    }

    /**
     * Whether every connection has been added.
     *
     * @return true when the link can carry messages.
     */
    boolean complete()
    {
        for (int i = 0; i < connections.length(); i++)
        {
            if (null == connections.get(i))
            {
                return false;
            }
        }
        return true;
    }

    int connectionCount()
    {
        return connections.length();
    }

    /**
     * One of the connections, for tests and diagnostics.
     *
     * @param index which.
     * @return it, or null before its handshake.
     */
    TcpConnection connection(final int index)
    {
        return connections.get(index);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Events, on the connections' event loops.

    /**
     * Test hook: counted down once the inactivity of every connection has been handled.
     *
     * @return the latch.
     */
    CountDownLatch terminated()
    {
        return terminated;
    }

    void connectionTerminated()
    {
        terminated.countDown();
    }

    /**
     * The peer said GOODBYE on one connection; on the last, it has closed the link.
     *
     * @param connection the connection.
     */
    void onGoodbye(final TcpConnection connection)
    {
        if (goodbyes.incrementAndGet() == connections.length() && STATE.compareAndSet(this, OPEN, PEER_CLOSED))
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
        }
    }

    /**
     * A heartbeat tick: each connection beats, and one whose peer has been silent for {@code timeoutNanos} fails the
     * link, naming the peer.
     *
     * @param nowNanos     now, by {@link System#nanoTime()}.
     * @param timeoutNanos the heartbeat timeout.
     */
    void beat(final long nowNanos, final long timeoutNanos)
    {
        if (OPEN != state)
        {
            return;
        }
        for (int i = 0; i < connections.length(); i++)
        {
            final TcpConnection c = connections.get(i);
            if (null == c)
            {
                continue;
            }
            final long silent = c.silentNanos(nowNanos);
            if (silent > timeoutNanos)
            {
                fail(c, String.format("%s: no word from rank %d for %.1f s (HCCL_HEARTBEAT_TIMEOUT %.1f s): its " +
                    "process is frozen (stopped, in a debugger, swapping) or the network to it is down",
                    c.name(), peer, silent / 1e9, timeoutNanos / 1e9), null, true);
                return;
            }
            c.heartbeat();
        }
    }

    /**
     * The peer sent ABORT.
     *
     * @param commId the communicator that failed there.
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
     * A connection failed, and with it the link: reports it once (unless this side is closing) and closes every
     * connection. When the link is no longer open (closing, or the peer said goodbye elsewhere), only the failed
     * connection is closed: the others may still be carrying the last messages.
     *
     * @param source  the connection that failed.
     * @param message what happened, in words.
     * @param cause   the underlying cause, or null.
     * @param log     false when the caller has logged it already.
     */
    void fail(final TcpConnection source, final String message, final Throwable cause, final boolean log)
    {
        if (!STATE.compareAndSet(this, OPEN, FAILED))
        {
            source.channel().close();
            return;
        }
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
        closeChannels();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Closing.

    /**
     * Closes in good order: on every connection, GOODBYE after any queued sends, then a half-close of our output.
     *
     * @param closes where to add each connection's close future.
     */
    void closeOrderly(final List<ChannelFuture> closes)
    {
        final int previous = STATE.getAndSet(this, CLOSED);
        for (int i = 0; i < connections.length(); i++)
        {
            final TcpConnection connection = connections.get(i);
            if (null != connection)
            {
                closes.add(OPEN == previous ? connection.sayGoodbye() : connection.channel().close());
            }
        }
    }

    /**
     * Test hook: closes every connection without GOODBYE, as a crashed process would.
     */
    void closeAbruptly()
    {
        STATE.set(this, CLOSED);
        closeChannels();
    }

    HcclException sendFailure(final Throwable cause)
    {
        final String message = failureMessage;
        return new HcclException(
            ErrorCode.E_TCP_TRANSFER, rank, peer, null, HcclException.NO_SEQUENCE,
            "send to rank " + peer + " failed: " + (null != message ? message : String.valueOf(cause)),
            null != cause ? cause : failure);
    }

    private void closeChannels()
    {
        for (int i = 0; i < connections.length(); i++)
        {
            final TcpConnection connection = connections.get(i);
            if (null != connection)
            {
                connection.channel().close();
            }
        }
    }

    /**
     * The connection with the fewest bytes queued; the search starts one further each call, so that equal loads
     * take turns. Only called on a complete link.
     */
    private TcpConnection leastLoaded()
    {
        final int n = connections.length();
        if (1 == n)
        {
            return connections.get(0);
        }
        final int start = Math.floorMod(nextStart++, n);
        TcpConnection best = null;
        long bestBytes = Long.MAX_VALUE;
        for (int i = 0; i < n; i++)
        {
            final TcpConnection c = connections.get((start + i) % n);
            final long bytes = c.queuedBytes();
            if (bytes < bestBytes)
            {
                best = c;
                bestBytes = bytes;
                if (0 == bytes)
                {
                    break;
                }
            }
        }
        return best;
    }

    private HcclException notOpen()
    {
        return new HcclException(
            ErrorCode.E_TCP_TRANSFER, rank, peer, null, HcclException.NO_SEQUENCE,
            "cannot send to rank " + peer + ": " + LinkState.whyNotOpen(state, peer, failure), failure);
    }
}
