package dev.hccl.transport.netty;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Setting;
import dev.hccl.api.spi.TlsMaterial;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.spi.TransportKind;
import dev.hccl.api.spi.TransportProvider;

import java.util.List;

/**
 * The TCP transport as a plug-in: reaches every peer, on any node, so it is the one every pair falls back to.
 */
public final class TcpTransportProvider implements TransportProvider
{
    /** The preference of TCP: below the transports that only some pairs can use. */
    public static final int PREFERENCE = 100;
    /** What {@link #kind()} says. */
    private static final TransportKind KIND = TransportKind.network(
        new TransportKind.LinkFigures(10e-6 / 2.5, 1 / 1.2e9 / 2.5), new TransportKind.LinkFigures(30e-6, 1 / 1.1e9));
    /**
     * Netty I/O threads per process; 0 has none, the thread that waits for a transfer performing the I/O (lowest
     * latency), more lets the I/O of many peers use more cores.
     */
    public static final Setting<Integer> IO_THREADS = Setting.integer("HCCL_IO_THREADS", 0, 0,
        TcpSettings.IO_THREADS_MAX, "Netty I/O threads per process");
    /**
     * TCP connections per pair of ranks and I/O thread (NCCL's {@code NCCL_NSOCKS_PERTHREAD}): a pair has
     * {@code HCCL_SOCKET_NSOCKS x HCCL_SOCKET_NTHREADS} connections, and the segments of a large transfer travel over
     * them side by side. Every rank must use the same values.
     */
    public static final Setting<Integer> SOCKET_NSOCKS = Setting.integer("HCCL_SOCKET_NSOCKS", 1, 1,
        TcpSettings.CONNECTIONS_PER_PEER_MAX, "TCP connections per pair of ranks and I/O thread");
    /**
     * I/O threads that one pair's TCP connections are spread over (NCCL's {@code NCCL_SOCKET_NTHREADS}); more than 1
     * needs at least as many {@link #IO_THREADS}.
     */
    public static final Setting<Integer> SOCKET_NTHREADS = Setting.integer("HCCL_SOCKET_NTHREADS", 1, 1,
        TcpSettings.CONNECTIONS_PER_PEER_MAX, "I/O threads one pair's TCP connections are spread over");

    /**
     * Public for {@link java.util.ServiceLoader}.
     */
    public TcpTransportProvider()
    {
    }

    @Override
    public String name()
    {
        return "tcp";
    }

    @Override
    public int preference()
    {
        return PREFERENCE;
    }

    /**
     * A network transport. Within a node, loopback TCP on a server: the 2-vCPU VM's 10 us per message and 1.2 GB/s
     * per link ({@code docs/ALGORITHMS.md}) made 2.5 times faster, the speedup the cost model assumes of a server over
     * that VM. Between nodes, 10 Gbit/s Ethernet through the kernel's TCP stack: 30 us per message (Open MPI's TCP
     * latency between hosts on such a network) and 1.1 GB/s of payload.
     *
     * @return a network transport with those figures.
     */
    @Override
    public TransportKind kind()
    {
        return KIND;
    }

    /**
     * Listens on the chosen interface's address only, not the wildcard: the other ranks dial that address anyway, and
     * an interface that was excluded (a public one, a container bridge) should not carry the port at all.
     */
    @Override
    public Transport open(final TransportContext context)
    {
        final CommConfig config = context.config();
        return NettyTransport.bind(new TcpSettings()
            .rank(context.rank())
            .worldSize(context.worldSize())
            .jobToken(context.jobToken())
            .commId(context.commId())
            .bindAddress(context.bindAddress())
            .maxFrameBytes(config.maxFrameBytes())
            .checksum(config.get(CommConfig.CHECKSUM))
            .ioThreads(config.get(IO_THREADS))
            .connectionsPerPeer(connectionsPerPeer(config))
            .threadsPerPeer(config.get(SOCKET_NTHREADS))
            .connectTimeout(config.connectTimeout())
            .heartbeatTimeout(config.heartbeatTimeout())
            .tls(TlsMaterial.of(config))
            .inbound(context.inbound())
            .conclude());
    }

    /**
     * {@inheritDoc}
     *
     * @return {@link #IO_THREADS}, {@link #SOCKET_NSOCKS} and {@link #SOCKET_NTHREADS}.
     */
    @Override
    public List<Setting<?>> settings()
    {
        return List.of(IO_THREADS, SOCKET_NSOCKS, SOCKET_NTHREADS);
    }

    /**
     * {@inheritDoc}
     * <p>
     * The connections per pair ({@link #SOCKET_NSOCKS} x {@link #SOCKET_NTHREADS}) are at most
     * {@value TcpSettings#CONNECTIONS_PER_PEER_MAX}, and their threads need as many {@link #IO_THREADS}.
     */
    @Override
    public void check(final CommConfig config)
    {
        connectionsPerPeer(config);
        final int threads = config.get(SOCKET_NTHREADS);
        final int io = config.get(IO_THREADS);
        if (threads > Math.max(1, io))
        {
            throw new IllegalArgumentException(SOCKET_NTHREADS.variable() + "=" + threads + " spreads each pair's " +
                "connections over " + threads + " I/O threads, but " + IO_THREADS.variable() + "=" + io + "; set " +
                IO_THREADS.variable() + " to at least " + threads);
        }
    }

    /**
     * TCP connections per pair of ranks.
     *
     * @param config the configuration.
     * @return {@link #SOCKET_NSOCKS} x {@link #SOCKET_NTHREADS}.
     * @throws IllegalArgumentException when the product is above {@value TcpSettings#CONNECTIONS_PER_PEER_MAX}.
     */
    public static int connectionsPerPeer(final CommConfig config)
    {
        final int sockets = config.get(SOCKET_NSOCKS);
        final int threads = config.get(SOCKET_NTHREADS);
        if (sockets * threads > TcpSettings.CONNECTIONS_PER_PEER_MAX)
        {
            throw new IllegalArgumentException(SOCKET_NSOCKS.variable() + " (" + sockets + ") x " +
                SOCKET_NTHREADS.variable() + " (" + threads + "), the TCP connections per pair, must be at most " +
                TcpSettings.CONNECTIONS_PER_PEER_MAX);
        }
        return sockets * threads;
    }
}
