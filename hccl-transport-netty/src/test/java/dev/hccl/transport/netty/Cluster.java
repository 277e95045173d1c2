package dev.hccl.transport.netty;

import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.testing.RecordingInbound;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Test support: transports on 127.0.0.1 in this JVM, closed together.
 */
final class Cluster implements AutoCloseable
{
    static final long COMM_ID = 0x5EED_CAFEL;
    static final String TOKEN = "test-token";
    static final Duration TIMEOUT = Duration.ofSeconds(20);
    /**
     * Surefire runs the suite three times: with no I/O threads (the default) and one connection per pair; with one
     * I/O thread; and with two I/O threads and three connections per pair spread over both.
     */
    static final int IO_THREADS = Integer.getInteger("hccl.test.ioThreads", TcpSettings.IO_THREADS_DEFAULT);
    /** Connections per pair in this run of the suite. */
    static final int CONNECTIONS = Integer.getInteger("hccl.test.connections", 1);
    /** I/O threads per pair in this run of the suite. */
    static final int THREADS_PER_PEER = Integer.getInteger("hccl.test.threadsPerPeer", 1);

    private final List<NettyTransport> transports = new ArrayList<>();
    private final ExecutorService executor = Executors.newCachedThreadPool(r ->
    {
        final Thread t = new Thread(r, "test-connect");
        t.setDaemon(true);
        return t;
    });

    static TcpSettings context(final int rank, final int worldSize, final RecordingInbound inbound)
    {
        return new TcpSettings()
            .rank(rank)
            .worldSize(worldSize)
            .jobToken(TOKEN)
            .commId(COMM_ID)
            .bindAddress(InetAddress.getLoopbackAddress())
            .connectTimeout(TIMEOUT)
            .ioThreads(IO_THREADS)
            .connectionsPerPeer(CONNECTIONS)
            .threadsPerPeer(THREADS_PER_PEER)
            .inbound(inbound);
    }

    /**
     * Settings for a transport that a test's raw socket talks to: that socket is the pair's only connection.
     */
    static TcpSettings rawPeerContext(final int rank, final int worldSize, final RecordingInbound inbound)
    {
        return context(rank, worldSize, inbound).connectionsPerPeer(1).threadsPerPeer(1);
    }

    NettyTransport bind(final TcpSettings ctx)
    {
        final NettyTransport t = NettyTransport.bind(ctx);
        transports.add(t);
        return t;
    }

    /**
     * Binds and fully connects {@code n} ranks.
     */
    NettyTransport[] connected(final RecordingInbound[] inbounds) throws Exception
    {
        return connected(inbounds, UnaryOperator.identity());
    }

    /**
     * Binds and fully connects {@code n} ranks, adjusting each one's settings.
     */
    NettyTransport[] connected(
        final RecordingInbound[] inbounds, final UnaryOperator<TcpSettings> customize) throws Exception
    {
        final int n = inbounds.length;
        final NettyTransport[] ts = new NettyTransport[n];
        final InetSocketAddress[] addresses = new InetSocketAddress[n];
        for (int r = 0; r < n; r++)
        {
            inbounds[r] = new RecordingInbound();
            ts[r] = bind(customize.apply(context(r, n, inbounds[r])));
            addresses[r] = ts[r].listenAddress();
        }
        final List<Future<?>> connects = new ArrayList<>();
        for (int r = 0; r < n; r++)
        {
            connects.add(connectAsync(ts[r], addresses));
        }
        for (final Future<?> f : connects)
        {
            f.get(TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS);
        }
        return ts;
    }

    Future<?> connectAsync(final NettyTransport t, final InetSocketAddress[] addresses)
    {
        return executor.submit(() -> t.connect(addresses));
    }

    Future<?> submit(final Runnable task)
    {
        return executor.submit(task);
    }

    static Throwable failureOf(final Future<?> f) throws Exception
    {
        try
        {
            f.get(TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS);
            return null;
        }
        catch (final ExecutionException ex)
        {
            return ex.getCause();
        }
    }

    static Request send(
        final NettyTransport from, final int to, final long seq, final long tag, final OpDescriptor desc,
        final ByteBuffer payload)
    {
        final Request r = new Request(to, true, tag);
        from.link(to).send(COMM_ID, seq, tag, desc, payload, r);
        return r;
    }

    static void awaitOk(final Request r)
    {
        assertTrue(r.await(System.nanoTime() + TimeUnit.SECONDS.toNanos(20)), "send did not complete: " + r);
        assertNull(r.failure(), () -> "send failed: " + r.failure());
    }

    @Override
    public void close()
    {
        for (final NettyTransport t : transports)
        {
            t.close();
        }
        executor.shutdownNow();
    }
}
