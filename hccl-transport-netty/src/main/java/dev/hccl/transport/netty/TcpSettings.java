package dev.hccl.transport.netty;

import dev.hccl.api.CommConfig;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.TlsMaterial;

import java.net.InetAddress;
import java.time.Duration;

/**
 * Settings of a {@link NettyTransport}: set what is needed, then {@link NettyTransport#bind(TcpSettings)}.
 */
public final class TcpSettings
{
    /**
     * Default for {@link #maxFrameBytes(int)}: {@code HCCL_BUFFSIZE}'s default, in bytes. Payloads are streamed, so
     * this bounds no buffer.
     */
    public static final int MAX_FRAME_BYTES_DEFAULT = CommConfig.BUFFSIZE.defaultValue() * 1024 * 1024;
    /** Default for {@link #ioThreads(int)}: {@code HCCL_IO_THREADS}'s, none (the waiting threads do the I/O). */
    public static final int IO_THREADS_DEFAULT = TcpTransportProvider.IO_THREADS.defaultValue();
    /** The most I/O threads a transport may have. */
    public static final int IO_THREADS_MAX = 64;
    /** The most connections a pair of ranks may have: each is a file descriptor per peer on both sides. */
    public static final int CONNECTIONS_PER_PEER_MAX = 16;
    /** Default for {@link #connectTimeout(Duration)}: {@code HCCL_CONNECT_TIMEOUT}'s default. */
    public static final Duration CONNECT_TIMEOUT_DEFAULT = CommConfig.CONNECT_TIMEOUT.defaultValue();
    /** Default for {@link #heartbeatTimeout(Duration)}: {@code HCCL_HEARTBEAT_TIMEOUT}'s default. */
    public static final Duration HEARTBEAT_TIMEOUT_DEFAULT = CommConfig.HEARTBEAT_TIMEOUT.defaultValue();

    private int rank = -1;
    private int worldSize = -1;
    private String jobToken;
    private long commId;
    private InetAddress bindAddress = InetAddress.getLoopbackAddress();
    private int maxFrameBytes = MAX_FRAME_BYTES_DEFAULT;
    private boolean checksum;
    private int ioThreads = IO_THREADS_DEFAULT;
    private int connectionsPerPeer = TcpTransportProvider.SOCKET_NSOCKS.defaultValue();
    private int threadsPerPeer = TcpTransportProvider.SOCKET_NTHREADS.defaultValue();
    private Duration connectTimeout = CONNECT_TIMEOUT_DEFAULT;
    private Duration heartbeatTimeout = HEARTBEAT_TIMEOUT_DEFAULT;
    private TlsMaterial tls;
    private Inbound inbound;

    /**
     * This process's rank in the root communicator. Required.
     *
     * @param rank 0 to worldSize - 1.
     * @return this.
     */
    public TcpSettings rank(final int rank)
    {
        this.rank = rank;
        return this;
    }

    /**
     * This process's rank.
     *
     * @return the rank.
     */
    public int rank()
    {
        return rank;
    }

    /**
     * Number of ranks in the root communicator. Required.
     *
     * @param worldSize at least 1.
     * @return this.
     */
    public TcpSettings worldSize(final int worldSize)
    {
        this.worldSize = worldSize;
        return this;
    }

    /**
     * Number of ranks.
     *
     * @return the world size.
     */
    public int worldSize()
    {
        return worldSize;
    }

    /**
     * The secret every rank of the job shares; it keys the handshake's authenticator and never crosses the wire.
     * Required (may be empty, which authenticates nothing).
     *
     * @param jobToken the token.
     * @return this.
     */
    public TcpSettings jobToken(final String jobToken)
    {
        this.jobToken = jobToken;
        return this;
    }

    /**
     * The job token.
     *
     * @return the token.
     */
    public String jobToken()
    {
        return jobToken;
    }

    /**
     * The root communicator's id; a connection from another communicator is refused.
     *
     * @param commId the id.
     * @return this.
     */
    public TcpSettings commId(final long commId)
    {
        this.commId = commId;
        return this;
    }

    /**
     * The root communicator's id.
     *
     * @return the id.
     */
    public long commId()
    {
        return commId;
    }

    /**
     * The address to listen on, e.g. {@code 127.0.0.1}, an interface's address, or {@code 0.0.0.0}. Defaults to
     * the loopback address. With a wildcard address, publish a reachable address rather than
     * {@link NettyTransport#listenAddress()}.
     *
     * @param bindAddress the address.
     * @return this.
     */
    public TcpSettings bindAddress(final InetAddress bindAddress)
    {
        this.bindAddress = bindAddress;
        return this;
    }

    /**
     * The address to listen on.
     *
     * @return the address.
     */
    public InetAddress bindAddress()
    {
        return bindAddress;
    }

    /**
     * Largest payload of one frame, sent or received; a received frame that claims more is a protocol error.
     * Defaults to {@link #MAX_FRAME_BYTES_DEFAULT}.
     *
     * @param maxFrameBytes bytes, at least 1.
     * @return this.
     */
    public TcpSettings maxFrameBytes(final int maxFrameBytes)
    {
        this.maxFrameBytes = maxFrameBytes;
        return this;
    }

    /**
     * Largest payload of one frame.
     *
     * @return bytes.
     */
    public int maxFrameBytes()
    {
        return maxFrameBytes;
    }

    /**
     * Whether every DATA frame with a payload carries a CRC32C of it after the payload, checked by the receiver
     * ({@code HCCL_CHECKSUM}). Both ends of every link must agree. Off by default.
     *
     * @param checksum true to send and check the CRC.
     * @return this.
     */
    public TcpSettings checksum(final boolean checksum)
    {
        this.checksum = checksum;
        return this;
    }

    /**
     * Whether DATA frames carry a CRC32C of their payload.
     *
     * @return true when on.
     */
    public boolean checksum()
    {
        return checksum;
    }

    /**
     * Number of I/O threads. Defaults to {@link #IO_THREADS_DEFAULT}: the threads that wait for transfers drive the
     * I/O through {@link NettyTransport#progressEngine()}, for lower small-message latency (measured:
     * docs/PERFORMANCE.md). With threads, the I/O of many peers can use more cores.
     *
     * @param ioThreads 0 to {@value #IO_THREADS_MAX}.
     * @return this.
     */
    public TcpSettings ioThreads(final int ioThreads)
    {
        this.ioThreads = ioThreads;
        return this;
    }

    /**
     * Number of I/O threads.
     *
     * @return the count.
     */
    public int ioThreads()
    {
        return ioThreads;
    }

    /**
     * How many TCP connections each pair of ranks has, every rank alike: each message goes whole on the least
     * loaded one, so the segments of a large transfer travel side by side (NCCL's
     * {@code NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS}). Defaults to 1.
     *
     * @param connections 1 to {@value #CONNECTIONS_PER_PEER_MAX}.
     * @return this.
     */
    public TcpSettings connectionsPerPeer(final int connections)
    {
        this.connectionsPerPeer = connections;
        return this;
    }

    /**
     * Connections per pair of ranks.
     *
     * @return the count.
     */
    public int connectionsPerPeer()
    {
        return connectionsPerPeer;
    }

    /**
     * Over how many I/O threads the dialing rank spreads a pair's connections, so that one pair's bytes can keep
     * several cores busy. Defaults to 1; more needs as many {@link #ioThreads(int)}.
     *
     * @param threads 1 to {@link #connectionsPerPeer()}.
     * @return this.
     */
    public TcpSettings threadsPerPeer(final int threads)
    {
        this.threadsPerPeer = threads;
        return this;
    }

    /**
     * I/O threads per pair.
     *
     * @return the count.
     */
    public int threadsPerPeer()
    {
        return threadsPerPeer;
    }

    /**
     * How long {@link NettyTransport#connect} may take in all, and how long an accepted connection may take to
     * send its HELLO. Defaults to {@link #CONNECT_TIMEOUT_DEFAULT}.
     *
     * @param connectTimeout positive.
     * @return this.
     */
    public TcpSettings connectTimeout(final Duration connectTimeout)
    {
        this.connectTimeout = connectTimeout;
        return this;
    }

    /**
     * The connect timeout.
     *
     * @return the timeout.
     */
    public Duration connectTimeout()
    {
        return connectTimeout;
    }

    /**
     * How long a connected peer may stay silent before its link fails: every connection carries a heartbeat each
     * second when it carries nothing else, and the kernel gives up on unacknowledged data a little later
     * ({@code TCP_USER_TIMEOUT}, with epoll: {@link TcpSocketOptions#kernelTimeoutMillis}). Defaults to
     * {@link #HEARTBEAT_TIMEOUT_DEFAULT}.
     *
     * @param heartbeatTimeout at least one second.
     * @return this.
     */
    public TcpSettings heartbeatTimeout(final Duration heartbeatTimeout)
    {
        this.heartbeatTimeout = heartbeatTimeout;
        return this;
    }

    /**
     * The heartbeat timeout.
     *
     * @return the timeout.
     */
    public Duration heartbeatTimeout()
    {
        return heartbeatTimeout;
    }

    /**
     * Mutual TLS on every connection, or none.
     *
     * @param tls the certificates, or null for plain TCP (the default).
     * @return this.
     */
    public TcpSettings tls(final TlsMaterial tls)
    {
        this.tls = tls;
        return this;
    }

    /**
     * @return the TLS certificates, or null for plain TCP.
     */
    public TlsMaterial tls()
    {
        return tls;
    }

    /**
     * Where received messages and link events go. Required.
     *
     * @param inbound the communicator layer's receiver.
     * @return this.
     */
    public TcpSettings inbound(final Inbound inbound)
    {
        this.inbound = inbound;
        return this;
    }

    /**
     * Where received messages and link events go.
     *
     * @return the receiver.
     */
    public Inbound inbound()
    {
        return inbound;
    }

    /**
     * Checks the settings.
     *
     * @return this.
     * @throws IllegalArgumentException naming the first invalid field.
     */
    public TcpSettings conclude()
    {
        if (worldSize < 1)
        {
            throw new IllegalArgumentException("worldSize: must be at least 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize)
        {
            throw new IllegalArgumentException("rank: must be in [0, " + worldSize + "), got " + rank);
        }
        if (null == jobToken)
        {
            throw new IllegalArgumentException("jobToken: must be set");
        }
        if (null == bindAddress)
        {
            throw new IllegalArgumentException("bindAddress: must be set");
        }
        if (maxFrameBytes < 1)
        {
            throw new IllegalArgumentException("maxFrameBytes: must be at least 1, got " + maxFrameBytes);
        }
        if (ioThreads < 0 || ioThreads > IO_THREADS_MAX)
        {
            throw new IllegalArgumentException(
                "ioThreads: must be in [0, " + IO_THREADS_MAX + "], got " + ioThreads);
        }
        if (connectionsPerPeer < 1 || connectionsPerPeer > CONNECTIONS_PER_PEER_MAX)
        {
            throw new IllegalArgumentException("connectionsPerPeer: must be in [1, " + CONNECTIONS_PER_PEER_MAX +
                "], got " + connectionsPerPeer);
        }
        if (threadsPerPeer < 1 || threadsPerPeer > connectionsPerPeer)
        {
            throw new IllegalArgumentException("threadsPerPeer: must be in [1, connectionsPerPeer " +
                connectionsPerPeer + "], got " + threadsPerPeer);
        }
        if (threadsPerPeer > Math.max(1, ioThreads))
        {
            throw new IllegalArgumentException("threadsPerPeer: " + threadsPerPeer + " threads per pair need at " +
                "least as many ioThreads, got " + ioThreads);
        }
        if (null == connectTimeout || connectTimeout.isNegative() || connectTimeout.isZero())
        {
            throw new IllegalArgumentException("connectTimeout: must be positive, got " + connectTimeout);
        }
        try
        {
            connectTimeout.toNanos();
        }
        catch (final ArithmeticException ex)
        {
            throw new IllegalArgumentException("connectTimeout: too long, got " + connectTimeout, ex);
        }
        if (null == heartbeatTimeout || heartbeatTimeout.compareTo(Duration.ofSeconds(1)) < 0 ||
            heartbeatTimeout.compareTo(Duration.ofDays(1)) > 0)
        {
            throw new IllegalArgumentException("heartbeatTimeout: must be in [1 s, 1 day], got " + heartbeatTimeout);
        }
        if (null == inbound)
        {
            throw new IllegalArgumentException("inbound: must be set");
        }
        return this;
    }
}
