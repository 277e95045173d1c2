package dev.hccl.transport.netty;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Transport;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The TCP transport: one or more Netty channels per pair of ranks ({@link TcpSettings#connectionsPerPeer(int)}), epoll
 * when available and NIO otherwise.
 * <p>
 * <b>Life cycle.</b> {@link #bind(TcpSettings)} starts the I/O threads and listens on an ephemeral port;
 * {@link #listenAddress()} is what the other ranks must be told (through the bootstrap store).
 * {@link #connect(InetSocketAddress[])} then builds the full mesh: rank i dials every rank j &lt; i and accepts a
 * connection from every rank j &gt; i. Connections from higher ranks are accepted from the moment of {@code bind},
 * so messages may reach the {@link Inbound} before this rank's {@code connect} returns. With several connections
 * per pair, the dialer opens all of them and the link to a peer is up when every one has completed its handshake.
 * <p>
 * <b>Wire format.</b> Every connection opens with the handshake described in {@link Handshake} (HELLO with an
 * HMAC-SHA256 of the job token, then ACK or REJECT), followed by frames with the 48-byte header described in
 * {@link Frames}; all header fields are big-endian (network order).
 * <p>
 * <b>Threading.</b> Each channel lives on one I/O thread ({@code hccl-io-<rank>-<n>}, daemon); the dialer places a
 * pair's connections on {@link TcpSettings#threadsPerPeer(int)} threads, the acceptor takes Netty's turn-about. Every
 * {@link Inbound} callback about a connection runs on its channel's I/O thread, in the order of the bytes on the wire:
 * messages on one connection are announced ({@code onMessage}), written ({@code MessageSink.write}, one or more
 * chunks, each a little-endian view of the read buffer valid only during the call) and completed one after another,
 * never interleaved. With several connections per pair, messages from one peer arrive on each side by side, in no
 * particular order between connections. Callbacks must not block and must not call {@link #close()}.
 * {@link Link#send} may be called from any thread and completes on the I/O thread; each message goes whole on one
 * connection (see {@link TcpLink}).
 * <p>
 * <b>Failures.</b> A link that fails (reset, closed without GOODBYE, protocol error, a throwing sink) is reported
 * once to {@link Inbound#onLinkFailure} with {@link ErrorCode#E_TCP_TRANSFER}; after {@link #close()} has begun,
 * failures are no longer reported.
 */
public final class NettyTransport implements Transport
{
    /** How long {@link #close()} waits for the peers to acknowledge GOODBYE by closing their side. */
    static final long CLOSE_TIMEOUT_MS = 5_000;
    /** How long {@link #close()} waits for the I/O threads to stop. */
    static final long SHUTDOWN_TIMEOUT_MS = 5_000;
    /** Pipeline name of the handshake handler. */
    static final String HANDSHAKE_HANDLER = "handshake";
    /** Pipeline name of the frame receiver. */
    static final String FRAMES_HANDLER = "frames";

    private static final Logger LOG = LoggerFactory.getLogger(NettyTransport.class);

    private final int rank;
    private final int worldSize;
    private final long commId;
    private final int maxFrameBytes;
    /** Whether DATA frames carry a CRC32C of their payload ({@code HCCL_CHECKSUM}). */
    private final boolean checksum;
    private final long connectTimeoutNs;
    private final int connectionsPerPeer;
    private final int threadsPerPeer;
    private final Inbound inbound;
    private final Handshake handshake;
    private final EventLoopGroup group;
    /** The loop that callers drive, when there are no I/O threads; else null. */
    private final CallerDrivenEventLoop drivenLoop;
    /** The group's event loops, for placing each connection a dialer opens. */
    private final EventLoop[] loops;
    private final Class<? extends Channel> socketChannelClass;
    private final String name;
    private final Channel serverChannel;
    private final InetSocketAddress localAddress;
    /** The links and how they come up. */
    private final TcpMesh mesh;
    /** Beats on every link and fails those whose peer went silent. */
    private final Heartbeat heartbeat;
    /** The options every connection takes, accepted or dialed. */
    private final TcpSocketOptions socketOptions;
    /** Mutual TLS on every connection, or none. */
    private final TcpTls tls;
    /** Channels still in their handshake, closed by {@link #close()}. */
    private final Set<Channel> handshaking = ConcurrentHashMap.newKeySet();

    private NettyTransport(
        final TcpSettings ctx,
        final EventLoopGroup group,
        final boolean epoll)
    {
        this.rank = ctx.rank();
        this.worldSize = ctx.worldSize();
        this.commId = ctx.commId();
        this.maxFrameBytes = ctx.maxFrameBytes();
        this.checksum = ctx.checksum();
        this.connectTimeoutNs = ctx.connectTimeout().toNanos();
        this.connectionsPerPeer = ctx.connectionsPerPeer();
        this.threadsPerPeer = ctx.threadsPerPeer();
        this.inbound = ctx.inbound();
        this.handshake = new Handshake(ctx.jobToken());
        this.group = group;
        this.drivenLoop = group instanceof CallerDrivenEventLoop ? (CallerDrivenEventLoop)group : null;
        final List<EventLoop> loopList = new ArrayList<>();
        for (final EventExecutor e : group)
        {
            loopList.add((EventLoop)e);
        }
        this.loops = loopList.toArray(new EventLoop[0]);
        this.socketOptions = new TcpSocketOptions(epoll, ctx.heartbeatTimeout());
        this.tls = TcpTls.of(rank, ctx.tls());
        this.socketChannelClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        this.name = epoll ? "tcp/epoll" : "tcp/nio";
        this.mesh = new TcpMesh(this, connectionsPerPeer, connectTimeoutNs);

        final Class<? extends ServerChannel> serverClass =
            epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        final ServerBootstrap sb = new ServerBootstrap()
            .group(group)
            .channel(serverClass)
            .option(ChannelOption.SO_REUSEADDR, true);
        socketOptions.applyTo(sb);
        sb.childHandler(new ChannelInitializer<Channel>()
        {
            @Override
            protected void initChannel(final Channel ch)
            {
                if (handshaking.size() >= maxHandshakes())
                {
                    // Strangers must not hold every descriptor: real dialers finish in milliseconds.
                    ch.close();
                    return;
                }
                trackHandshake(ch);
                tls.addAcceptor(ch);
                ch.pipeline().addLast(HANDSHAKE_HANDLER, new AcceptorHandshake(NettyTransport.this));
            }
        });
        final ChannelFuture bound = sb.bind(new InetSocketAddress(ctx.bindAddress(), 0)).awaitUninterruptibly();
        if (!bound.isSuccess())
        {
            throw new HcclException(
                ErrorCode.E_TCP_CONNECT, rank, HcclException.UNKNOWN_RANK, Operation.INIT, HcclException.NO_SEQUENCE,
                "cannot listen on " + ctx.bindAddress() + ": " + bound.cause(), bound.cause());
        }
        this.serverChannel = bound.channel();
        this.localAddress = (InetSocketAddress)serverChannel.localAddress();
        this.heartbeat = new Heartbeat(rank, worldSize, mesh::link, ctx.heartbeatTimeout());
    }

    /**
     * Puts the dialer's TLS first in a new channel's pipeline, when it is on.
     *
     * @param ch the channel.
     */
    void addDialerTls(final Channel ch)
    {
        tls.addDialer(ch);
    }

    /**
     * Starts the I/O threads and listens on an ephemeral port of {@link TcpSettings#bindAddress()}. Returns at once;
     * connections from higher ranks are accepted from now on.
     *
     * @param ctx the settings; {@link TcpSettings#conclude()} is applied.
     * @return the transport, not yet connected.
     * @throws IllegalArgumentException naming the field when a setting is invalid.
     * @throws HcclException            with {@link ErrorCode#E_TCP_CONNECT} when the address cannot be bound.
     */
    public static NettyTransport bind(final TcpSettings ctx)
    {
        ctx.conclude();
        final boolean epoll = Epoll.isAvailable();
        final IoHandlerFactory ioHandlerFactory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        final EventLoopGroup group = 0 == ctx.ioThreads() ?
            new CallerDrivenEventLoop(ioHandlerFactory, "hccl-io-" + ctx.rank() + "-idle") :
            new MultiThreadIoEventLoopGroup(ctx.ioThreads(), new IoThreadFactory(ctx.rank()), ioHandlerFactory);
        try
        {
            final NettyTransport transport = new NettyTransport(ctx, group, epoll);
            final String io = 0 == ctx.ioThreads() ? "the waiting threads doing the I/O" :
                ctx.ioThreads() + " I/O thread" + (1 == ctx.ioThreads() ? "" : "s");
            if (epoll)
            {
                LOG.debug("rank {}: tcp transport uses epoll, listening on {} with {}",
                    ctx.rank(), transport.localAddress, io);
            }
            else
            {
                LOG.debug("rank {}: tcp transport uses NIO (epoll unavailable: {}), listening on {} with {}",
                    ctx.rank(), Epoll.unavailabilityCause(), transport.localAddress, io);
            }
            return transport;
        }
        catch (final RuntimeException | Error ex)
        {
            group.shutdownGracefully(0, SHUTDOWN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            throw ex;
        }
    }

    /**
     * The listening address, to be published to the other ranks.
     *
     * @return the bound address; its port is not 0.
     */
    public InetSocketAddress listenAddress()
    {
        return localAddress;
    }

    /**
     * {@inheritDoc}
     *
     * @return the listening address ({@link TcpAddress}).
     */
    @Override
    public byte[] localAddress()
    {
        return TcpAddress.encode(localAddress);
    }

    /**
     * Connects to the peers the communicator chose TCP for: dials the lower ones and waits for the higher ones.
     *
     * @return every peer given, or throws as {@link #connect(InetSocketAddress[], boolean[])} does.
     */
    @Override
    public Set<Integer> connect(final PeerEndpoint self, final List<PeerEndpoint> peers, final long deadlineNanos)
    {
        final InetSocketAddress[] addresses = new InetSocketAddress[worldSize];
        final boolean[] expected = new boolean[worldSize];
        final Set<Integer> ranks = new TreeSet<>();
        for (final PeerEndpoint peer : peers)
        {
            addresses[peer.rank()] = TcpAddress.decode(peer.address());
            expected[peer.rank()] = true;
            ranks.add(peer.rank());
        }
        connect(addresses, expected);
        return ranks;
    }

    /**
     * Builds the links to every other rank: dials every lower rank (retrying refused connections with a short
     * backoff) and waits for every higher rank to dial in. Blocks until all {@code worldSize - 1} links have
     * completed their handshake, a dial is rejected, or the connect timeout passes. Call once.
     *
     * @param peers the listening address of every rank, indexed by rank; this rank's entry and those of higher ranks
     *              are not used.
     * @throws HcclException            with {@link ErrorCode#E_TCP_CONNECT} naming every rank not connected and why
     *                                  ({@code refused}, {@code rejected: <reason>}, {@code timeout: ...}); the
     *                                  transport should then be closed.
     * @throws IllegalArgumentException when {@code peers} has the wrong length or a needed entry is null.
     * @throws IllegalStateException    when called twice.
     */
    public void connect(final InetSocketAddress[] peers)
    {
        final boolean[] all = new boolean[worldSize];
        Arrays.fill(all, true);
        all[rank] = false;
        connect(peers, all);
    }

    /**
     * Builds the links to the peers {@code expected} names, as {@link #connect(InetSocketAddress[])} does for all;
     * a peer not expected (the pair uses another transport) is refused if it dials.
     *
     * @param peers    the listening address of every expected lower rank, indexed by rank; others may be null.
     * @param expected by rank, whether a link is wanted.
     */
    public void connect(final InetSocketAddress[] peers, final boolean[] expected)
    {
        mesh.connect(peers, expected);
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException when {@code peer} is out of range or this rank.
     * @throws IllegalStateException    when there is no link to {@code peer} (not connected).
     */
    @Override
    public Link link(final int peer)
    {
        if (peer < 0 || peer >= worldSize || peer == rank)
        {
            throw new IllegalArgumentException(
                "peer: must be in [0, " + worldSize + ") and not this rank " + rank + ", got " + peer);
        }
        final TcpLink link = mesh.link(peer);
        if (null == link)
        {
            throw new IllegalStateException("rank " + rank + " has no connection to rank " + peer);
        }
        return link;
    }

    /**
     * {@inheritDoc}
     * <p>
     * With no I/O threads ({@link TcpSettings#ioThreads(int)} 0, the default) the engine is the event loop itself: a
     * thread that waits for a transfer runs it, and a thread of the transport runs it only while no other has for a
     * few milliseconds. Inbound callbacks then run on whichever thread drives.
     *
     * @return the engine, or null with I/O threads.
     */
    @Override
    public ProgressEngine progressEngine()
    {
        return drivenLoop;
    }

    /**
     * {@inheritDoc}
     *
     * @return {@code tcp/epoll} or {@code tcp/nio}.
     */
    @Override
    public String name()
    {
        return name;
    }

    /**
     * Closes in good order: stops listening; on every link writes GOODBYE behind any queued sends and half-closes;
     * waits (at most {@value #CLOSE_TIMEOUT_MS} ms) for the peers to close their side, then closes what is left and
     * stops the I/O threads (waiting at most {@value #SHUTDOWN_TIMEOUT_MS} ms). Failures are no longer reported once
     * this has begun. Idempotent. Must not be called from an {@link Inbound} callback (it then closes without
     * waiting).
     */
    @Override
    public void close()
    {
        final List<TcpLink> links = mesh.close();
        if (null == links)
        {
            return;
        }
        heartbeat.close();
        final boolean onIoThread = isIoThread();
        final List<ChannelFuture> closes = new ArrayList<>(worldSize + 1);
        closes.add(serverChannel.close());
        for (final TcpLink link : links)
        {
            link.closeOrderly(closes);
        }
        for (final Channel ch : handshaking)
        {
            closes.add(ch.close());
        }

        if (!onIoThread)
        {
            final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_TIMEOUT_MS);
            for (final ChannelFuture f : closes)
            {
                f.awaitUninterruptibly(Math.max(0, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            for (final ChannelFuture f : closes)
            {
                if (!f.isDone())
                {
                    LOG.warn("rank {}: {} did not close within {} ms; closing it now", rank, f.channel(),
                        CLOSE_TIMEOUT_MS);
                    f.channel().close();
                }
            }
        }

        final Future<?> terminated = group.shutdownGracefully(0, SHUTDOWN_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        if (!onIoThread && !terminated.awaitUninterruptibly(SHUTDOWN_TIMEOUT_MS + 1_000, TimeUnit.MILLISECONDS))
        {
            LOG.warn("rank {}: I/O threads did not stop within {} ms", rank, SHUTDOWN_TIMEOUT_MS);
        }
        LOG.debug("rank {}: tcp transport closed", rank);
    }

    @Override
    public String toString()
    {
        return "NettyTransport{rank " + rank + " of " + worldSize + ", " + name + ", " + localAddress + "}";
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Package-private: used by the handlers and by tests.

    int rank()
    {
        return rank;
    }

    int worldSize()
    {
        return worldSize;
    }

    long commId()
    {
        return commId;
    }

    int maxFrameBytes()
    {
        return maxFrameBytes;
    }

    /**
     * Whether DATA frames with a payload carry a CRC32C of it ({@link Frames#CHECKSUM_LENGTH} bytes after it).
     *
     * @return true when on.
     */
    boolean checksum()
    {
        return checksum;
    }

    long connectTimeoutNs()
    {
        return connectTimeoutNs;
    }

    int connectionsPerPeer()
    {
        return connectionsPerPeer;
    }

    Inbound inbound()
    {
        return inbound;
    }

    Handshake handshake()
    {
        return handshake;
    }

    int threadsPerPeer()
    {
        return threadsPerPeer;
    }

    Class<? extends Channel> socketChannelClass()
    {
        return socketChannelClass;
    }

    TcpSocketOptions socketOptions()
    {
        return socketOptions;
    }

    /**
     * The event loop of a dialed connection: a pair's connections take turns over threadsPerPeer threads, and pairs
     * start at different threads.
     *
     * @param peer       the peer dialed.
     * @param connection which of the pair's connections.
     * @return its loop.
     */
    EventLoop loopFor(final int peer, final int connection)
    {
        return loops[(peer + connection % threadsPerPeer) % loops.length];
    }

    TcpMesh mesh()
    {
        return mesh;
    }

    boolean isClosing()
    {
        return mesh.isClosing();
    }

    TcpLink linkOrNull(final int peer)
    {
        return mesh.link(peer);
    }

    /**
     * Test hook: closes every link without GOODBYE, as a process that dies would.
     */
    void closeLinksAbruptly()
    {
        for (int i = 0; i < worldSize; i++)
        {
            final TcpLink link = mesh.link(i);
            if (null != link)
            {
                link.closeAbruptly();
            }
        }
    }

    void handshakeDone(final Channel channel)
    {
        handshaking.remove(channel);
    }

    // ---------------------------------------------------------------------------------------------------------------

    /** Connections in their handshake at once, both directions: every peer's, and as many strangers' again. */
    private int maxHandshakes()
    {
        return 2 * worldSize * connectionsPerPeer + 64;
    }

    void trackHandshake(final Channel ch)
    {
        handshaking.add(ch);
        ch.closeFuture().addListener((ChannelFutureListener)f -> handshaking.remove(f.channel()));
    }

    private boolean isIoThread()
    {
        for (final EventExecutor e : group)
        {
            if (e.inEventLoop())
            {
                return true;
            }
        }
        return false;
    }
}
