package dev.hccl.transport.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Dials one connection to a lower rank until it answers, is rejected, or the connect deadline passes.
 */
final class Dialer implements Runnable
{
    /** First pause between dials that were refused: the peer is usually a moment from listening. */
    static final long BACKOFF_INITIAL_MS = 50;
    /** Longest pause between dials. */
    static final long BACKOFF_MAX_MS = 1_000;

    private static final Logger LOG = LoggerFactory.getLogger(Dialer.class);

    private final NettyTransport transport;
    private final TcpMesh mesh;
    private final int peer;
    private final int connection;
    private final InetSocketAddress address;
    /** The event loop of this connection: a pair's connections take turns over threadsPerPeer threads. */
    private final EventLoop loop;
    private final long deadlineNs;
    private long backoffMs = BACKOFF_INITIAL_MS;
    private volatile int attempts;
    private volatile Channel current;

    Dialer(
        final NettyTransport transport, final TcpMesh mesh, final int peer, final int connection,
        final InetSocketAddress address, final long deadlineNs)
    {
        this.transport = transport;
        this.mesh = mesh;
        this.peer = peer;
        this.connection = connection;
        this.address = address;
        this.loop = transport.loopFor(peer, connection);
        this.deadlineNs = deadlineNs;
    }

    int peer()
    {
        return peer;
    }

    int connection()
    {
        return connection;
    }

    InetSocketAddress address()
    {
        return address;
    }

    long nanosLeft()
    {
        return deadlineNs - System.nanoTime();
    }

    @Override
    public void run()
    {
        attempt();
    }

    void attempt()
    {
        final long leftNs = nanosLeft();
        if (mesh.connectOver() || leftNs <= 0)
        {
            return;
        }
        attempts++;
        final int connectTimeoutMs = (int)Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(leftNs)));
        final Bootstrap b = new Bootstrap()
            .group(loop)
            .channel(transport.socketChannelClass())
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs);
        transport.socketOptions().applyTo(b);
        b.handler(new ChannelInitializer<Channel>()
        {
            @Override
            protected void initChannel(final Channel ch)
            {
                // Set here, at registration, so it is in place before the connect can complete or fail.
                current = ch;
                transport.trackHandshake(ch);
                transport.addDialerTls(ch);
                ch.pipeline().addLast(NettyTransport.HANDSHAKE_HANDLER, new DialerHandshake(transport, Dialer.this));
            }
        });
        try
        {
            final ChannelFuture f = b.connect(address);
            f.addListener((ChannelFutureListener)cf ->
            {
                if (!cf.isSuccess())
                {
                    attemptFailed(describeFailure(address, cf.cause()), cf.cause());
                }
            });
        }
        catch (final RejectedExecutionException ex)
        {
            // The I/O threads are stopping: the transport is closing.
        }
    }

    /**
     * This attempt failed in a way worth retrying: record why, and dial again after a pause if time is left.
     *
     * @param status why, for the error message.
     * @param cause  the cause, or null.
     */
    void attemptFailed(final String status, final Throwable cause)
    {
        record(status, cause, false);
        final long leftMs = TimeUnit.NANOSECONDS.toMillis(nanosLeft());
        if (mesh.connectOver() || leftMs <= 0)
        {
            return;
        }
        final long delayMs = Math.min(backoffMs, leftMs);
        backoffMs = Math.min(backoffMs * 2, BACKOFF_MAX_MS);
        LOG.debug("rank {}: dial of rank {} at {}: {}; retrying in {} ms", transport.rank(), peer, address, status, delayMs);
        try
        {
            loop.schedule(this, delayMs, TimeUnit.MILLISECONDS);
        }
        catch (final RejectedExecutionException ex)
        {
            // The I/O threads are stopping: the transport is closing.
        }
    }

    /**
     * The peer refused us, or is not what we expected: retrying cannot help, so connect() fails at once.
     *
     * @param status why, for the error message.
     */
    void rejected(final String status)
    {
        LOG.warn("rank {}: connection to rank {} at {} failed: {}", transport.rank(), peer, address, status);
        record(status, null, true);
    }

    /**
     * The peer accepted the TCP connection but did not answer HELLO before the deadline.
     */
    void handshakeTimedOut()
    {
        record("timeout: no handshake reply from " + address, null, false);
    }

    /**
     * Records how the current attempt ended (see {@link TcpMesh#recordAttempt}).
     */
    private void record(final String status, final Throwable cause, final boolean fatal)
    {
        mesh.recordAttempt(this, status, cause, fatal);
    }

    /** The channel of the attempt under way, or null. */
    Channel current()
    {
        return current;
    }

    /** Forgets the attempt under way: it has ended. The mesh calls this under its lock. */
    void attemptEnded()
    {
        current = null;
    }

    int attempts()
    {
        return attempts;
    }

    /** Why a TCP connect failed, in words. */
    static String describeFailure(final InetSocketAddress address, final Throwable cause)
    {
        if (cause instanceof ConnectTimeoutException)
        {
            return "timeout: TCP connect to " + address + " timed out";
        }
        if (cause instanceof ConnectException)
        {
            return "refused";
        }
        return "connect to " + address + " failed: " + cause;
    }
}
