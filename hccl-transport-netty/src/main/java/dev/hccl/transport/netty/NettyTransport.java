package dev.hccl.transport.netty;

import dev.hccl.api.CommConfig;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
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
import io.netty.channel.ConnectTimeoutException;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The TCP transport: one or more Netty channels per pair of ranks ({@link Context#connectionsPerPeer(int)}), epoll
 * when available and NIO otherwise.
 * <p>
 * <b>Life cycle.</b> {@link #bind(Context)} starts the I/O threads and listens on an ephemeral port;
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
 * pair's connections on {@link Context#threadsPerPeer(int)} threads, the acceptor takes Netty's turn-about. Every
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
    /** Default for {@link Context#maxFrameBytes(int)}: 256 MiB; payloads are streamed, so this bounds no buffer. */
    public static final int MAX_FRAME_BYTES_DEFAULT = 256 * 1024 * 1024;
    /**
     * Default for {@link Context#ioThreads(int)}: none, the threads that wait for transfers perform the I/O (see
     * {@link #progressEngine()}).
     */
    public static final int IO_THREADS_DEFAULT = 0;
    /** The most I/O threads a transport may have. */
    public static final int IO_THREADS_MAX = 64;
    /** The most connections a pair of ranks may have: each is a file descriptor per peer on both sides. */
    public static final int CONNECTIONS_PER_PEER_MAX = 16;
    /** Default for {@link Context#connectTimeout(Duration)}: HCCL's {@code HCCL_CONNECT_TIMEOUT} default. */
    public static final Duration CONNECT_TIMEOUT_DEFAULT = Duration.ofSeconds(120);

    /** Smallest read buffer. */
    static final int READ_BUFFER_MIN_BYTES = 4 * 1024;
    /** First read buffer. */
    static final int READ_BUFFER_INITIAL_BYTES = 64 * 1024;
    /** Largest read buffer. */
    static final int READ_BUFFER_MAX_BYTES = 1024 * 1024;

    /** How long {@link #close()} waits for the peers to acknowledge GOODBYE by closing their side. */
    static final long CLOSE_TIMEOUT_MS = 5_000;
    /** How long {@link #close()} waits for the I/O threads to stop. */
    static final long SHUTDOWN_TIMEOUT_MS = 5_000;
    /** First pause between dials that were refused: the peer is usually a moment from listening. */
    static final long DIAL_BACKOFF_INITIAL_MS = 50;
    /** Longest pause between dials. */
    static final long DIAL_BACKOFF_MAX_MS = 1_000;
    /** Pipeline name of the handshake handler. */
    static final String HANDSHAKE_HANDLER = "handshake";
    /** Pipeline name of the frame receiver. */
    static final String FRAMES_HANDLER = "frames";

    private static final Logger LOG = LoggerFactory.getLogger(NettyTransport.class);

    private final int rank;
    private final int worldSize;
    private final long commId;
    private final int maxFrameBytes;
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
    /** The links that can carry messages: every connection of the pair is up. */
    private final AtomicReferenceArray<TcpLink> links;
    /** Channels still in their handshake, closed by {@link #close()}. */
    private final Set<Channel> handshaking = ConcurrentHashMap.newKeySet();

    private final Object lock = new Object();
    // Guarded by lock.
    private final String[] peerStatus;
    private final Throwable[] peerCause;
    /** Links with some of their connections up, by rank; moved to {@link #links} when complete. */
    private final TcpLink[] building;
    private int connected;
    /** The peers that {@link #connect} wants, by rank (null before it is called), and how many. */
    private boolean[] expected;
    private int wanted;
    private int fatalPeer = HcclException.UNKNOWN_RANK;
    private boolean connectCalled;
    /** By lower rank, then by connection. */
    private Dialer[][] dialers;

    private volatile boolean connectEnded;
    private volatile boolean closing;

    private NettyTransport(
        final Context ctx,
        final EventLoopGroup group,
        final boolean epoll)
    {
        this.rank = ctx.rank();
        this.worldSize = ctx.worldSize();
        this.commId = ctx.commId();
        this.maxFrameBytes = ctx.maxFrameBytes();
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
        this.socketChannelClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        this.name = epoll ? "tcp/epoll" : "tcp/nio";
        this.links = new AtomicReferenceArray<>(worldSize);
        this.peerStatus = new String[worldSize];
        this.peerCause = new Throwable[worldSize];
        this.building = new TcpLink[worldSize];

        final Class<? extends ServerChannel> serverClass =
            epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        final ServerBootstrap sb = new ServerBootstrap()
            .group(group)
            .channel(serverClass)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.SO_KEEPALIVE, true)
            .childOption(ChannelOption.RCVBUF_ALLOCATOR, readBuffers())
            .childHandler(new ChannelInitializer<Channel>()
            {
                @Override
                protected void initChannel(final Channel ch)
                {
                    trackHandshake(ch);
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
    }

    /**
     * Read buffers that grow up to {@link #READ_BUFFER_MAX_BYTES} under load: collectives move megabytes per
     * message, and each read costs a system call and a pass of the receive sink, so 64 KiB reads (Netty's default
     * ceiling) cut the bandwidth.
     */
    private static AdaptiveRecvByteBufAllocator readBuffers()
    {
        return new AdaptiveRecvByteBufAllocator(READ_BUFFER_MIN_BYTES, READ_BUFFER_INITIAL_BYTES, READ_BUFFER_MAX_BYTES);
    }

    /**
     * Starts the I/O threads and listens on an ephemeral port of {@link Context#bindAddress()}. Returns at once;
     * connections from higher ranks are accepted from now on.
     *
     * @param ctx the settings; {@link Context#conclude()} is applied.
     * @return the transport, not yet connected.
     * @throws IllegalArgumentException naming the field when a setting is invalid.
     * @throws HcclException            with {@link ErrorCode#E_TCP_CONNECT} when the address cannot be bound.
     */
    public static NettyTransport bind(final Context ctx)
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
                LOG.info("rank {}: tcp transport uses epoll, listening on {} with {}",
                    ctx.rank(), transport.localAddress, io);
            }
            else
            {
                LOG.info("rank {}: tcp transport uses NIO (epoll unavailable: {}), listening on {} with {}",
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
        Objects.requireNonNull(peers, "peers");
        if (peers.length != worldSize)
        {
            throw new IllegalArgumentException(
                "peers: expected " + worldSize + " addresses (one per rank), got " + peers.length);
        }
        int wanted = 0;
        for (int j = 0; j < worldSize; j++)
        {
            if (j != rank && expected[j])
            {
                wanted++;
                if (j < rank && null == peers[j])
                {
                    throw new IllegalArgumentException("peers[" + j + "]: the address of rank " + j + " is null");
                }
            }
        }

        final long startNs = System.nanoTime();
        final long deadlineNs = startNs + connectTimeoutNs;
        synchronized (lock)
        {
            if (connectCalled)
            {
                throw new IllegalStateException("connect() has already been called");
            }
            connectCalled = true;
            if (closing)
            {
                throw closedDuringConnect();
            }
            this.expected = expected.clone();
            this.wanted = wanted;
            dialers = new Dialer[rank][];
            for (int j = 0; j < rank; j++)
            {
                if (expected[j])
                {
                    dialers[j] = new Dialer[connectionsPerPeer];
                    for (int k = 0; k < connectionsPerPeer; k++)
                    {
                        dialers[j][k] = new Dialer(j, k, peers[j], deadlineNs);
                    }
                    peerStatus[j] = "connecting";
                }
            }
        }
        for (int j = 0; j < rank; j++)
        {
            if (null != dialers[j])
            {
                for (final Dialer d : dialers[j])
                {
                    d.attempt();
                }
            }
        }

        synchronized (lock)
        {
            try
            {
                while (!closing && HcclException.UNKNOWN_RANK == fatalPeer && connected < wanted)
                {
                    final long leftNs = deadlineNs - System.nanoTime();
                    if (leftNs <= 0)
                    {
                        break;
                    }
                    TimeUnit.NANOSECONDS.timedWait(lock, leftNs);
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                connectEnded = true;
                throw new HcclException(
                    ErrorCode.E_TCP_CONNECT, rank, HcclException.UNKNOWN_RANK, Operation.INIT,
                    HcclException.NO_SEQUENCE, "interrupted while connecting", ex);
            }
            connectEnded = true;
            if (closing)
            {
                throw closedDuringConnect();
            }
            if (connected == wanted)
            {
                LOG.info("rank {}: connected to {} peers in {} ms over {}{}",
                    rank, wanted, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs), name,
                    1 == connectionsPerPeer ? "" : ", " + connectionsPerPeer + " connections each on " +
                        threadsPerPeer + " thread" + (1 == threadsPerPeer ? "" : "s"));
                return;
            }
        }
        throw connectFailure(startNs);
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
        final TcpLink link = links.get(peer);
        if (null == link)
        {
            throw new IllegalStateException("rank " + rank + " has no connection to rank " + peer);
        }
        return link;
    }

    /**
     * {@inheritDoc}
     * <p>
     * With no I/O threads ({@link Context#ioThreads(int)} 0, the default) the engine is the event loop itself: a
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
        synchronized (lock)
        {
            if (closing)
            {
                return;
            }
            closing = true;
            lock.notifyAll();
        }

        final boolean onIoThread = isIoThread();
        final List<ChannelFuture> closes = new ArrayList<>(worldSize + 1);
        closes.add(serverChannel.close());
        for (int i = 0; i < worldSize; i++)
        {
            final TcpLink link = null != links.get(i) ? links.get(i) : building[i];
            if (null != link)
            {
                link.closeOrderly(closes);
            }
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

    boolean isClosing()
    {
        return closing;
    }

    TcpLink linkOrNull(final int peer)
    {
        return links.get(peer);
    }

    /**
     * Test hook: closes every link without GOODBYE, as a process that dies would.
     */
    void closeLinksAbruptly()
    {
        for (int i = 0; i < worldSize; i++)
        {
            final TcpLink link = links.get(i);
            if (null != link)
            {
                link.closeAbruptly();
            }
        }
    }

    /**
     * What the accepting side decided about a HELLO.
     *
     * @param connection the connection registered, or null when refused.
     * @param refusal    why it was refused, or null when accepted.
     */
    record Admission(TcpConnection connection, String refusal)
    {
    }

    /**
     * Checks a HELLO on the accepting side and, when it is good, registers the connection.
     *
     * @param hello   the HELLO.
     * @param channel its channel.
     * @return the connection, or why it is refused.
     */
    Admission admit(final Handshake.Hello hello, final Channel channel)
    {
        final String reason = checkHello(hello);
        synchronized (lock)
        {
            String refusal = reason;
            boolean incompatible = false;
            final int peer = hello.rank();
            if (null == refusal)
            {
                if (closing)
                {
                    refusal = "rank " + rank + " is closing";
                }
                else if (isUp(peer, hello.connection()))
                {
                    refusal = (1 == connectionsPerPeer ? "rank " + peer :
                        "connection " + hello.connection() + " of rank " + peer) + " is already connected";
                }
                else if (null != expected && !expected[peer])
                {
                    refusal = "rank " + peer + " is reached over another transport, not TCP";
                }
                else if (hello.connections() != connectionsPerPeer)
                {
                    // An authenticated rank of this job set up differently: waiting cannot help either side.
                    incompatible = true;
                    refusal = "rank " + peer + " opens " + hello.connections() + " connections to each peer and rank " +
                        rank + " " + connectionsPerPeer + "; " + CommConfig.SOCKET_NSOCKS_ENV + " x " +
                        CommConfig.SOCKET_NTHREADS_ENV + " must be the same on every rank";
                }
            }
            if (null != refusal)
            {
                if (peer > rank && peer < worldSize && null == links.get(peer))
                {
                    // Remembered so that a timeout names the real trouble, not just "no connection".
                    peerStatus[peer] = "its connection was refused here: " + refusal;
                    if (incompatible && HcclException.UNKNOWN_RANK == fatalPeer)
                    {
                        fatalPeer = peer;
                        lock.notifyAll();
                    }
                }
                return new Admission(null, refusal);
            }
            return new Admission(register(peer, hello.connection(), channel), null);
        }
    }

    /**
     * Registers a connection to a lower rank after its ACK.
     *
     * @param peer       the lower rank.
     * @param connection which of the pair's connections.
     * @param channel    the channel.
     * @return the connection, or null when closing or already connected.
     */
    TcpConnection registerDialed(final int peer, final int connection, final Channel channel)
    {
        synchronized (lock)
        {
            if (closing || isUp(peer, connection))
            {
                return null;
            }
            return register(peer, connection, channel);
        }
    }

    void handshakeDone(final Channel channel)
    {
        handshaking.remove(channel);
    }

    // ---------------------------------------------------------------------------------------------------------------

    private String checkHello(final Handshake.Hello hello)
    {
        if (Handshake.VERSION != hello.version())
        {
            return "protocol version " + hello.version() + ", this rank speaks " + Handshake.VERSION;
        }
        if (!handshake.verify(hello))
        {
            return "job token mismatch (authentication failed)";
        }
        if (commId != hello.commId())
        {
            return "communicator id mismatch: got " + Long.toHexString(hello.commId()) +
                ", expected " + Long.toHexString(commId);
        }
        if (worldSize != hello.worldSize())
        {
            return "world size mismatch: got " + hello.worldSize() + ", expected " + worldSize;
        }
        final int peer = hello.rank();
        if (peer < 0 || peer >= worldSize)
        {
            return "rank " + peer + " out of range [0, " + worldSize + ")";
        }
        if (peer <= rank)
        {
            return "rank " + peer + " must not dial rank " + rank + " (each rank dials only lower ranks)";
        }
        if (hello.connections() < 1 || hello.connections() > CONNECTIONS_PER_PEER_MAX ||
            hello.connection() >= hello.connections())
        {
            return "connection " + hello.connection() + " of " + hello.connections() + " is out of range (at most " +
                CONNECTIONS_PER_PEER_MAX + " connections per peer)";
        }
        return null;
    }

    /** Whether connection {@code index} to {@code peer} has completed its handshake. Caller holds lock. */
    private boolean isUp(final int peer, final int index)
    {
        return null != links.get(peer) || (null != building[peer] && building[peer].has(index));
    }

    private TcpConnection register(final int peer, final int index, final Channel channel)
    {
        // Caller holds lock.
        TcpLink link = building[peer];
        if (null == link)
        {
            link = new TcpLink(this, peer, connectionsPerPeer);
            building[peer] = link;
        }
        final TcpConnection connection = link.attach(index, channel);
        if (link.complete())
        {
            building[peer] = null;
            links.set(peer, link);
            peerStatus[peer] = null;
            peerCause[peer] = null;
            connected++;
            lock.notifyAll();
        }
        return connection;
    }

    private void trackHandshake(final Channel ch)
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

    private HcclException closedDuringConnect()
    {
        return new HcclException(
            ErrorCode.E_TCP_CONNECT, rank, HcclException.UNKNOWN_RANK, Operation.INIT, HcclException.NO_SEQUENCE,
            "the transport was closed while connecting", null);
    }

    private HcclException connectFailure(final long startNs)
    {
        final StringBuilder sb = new StringBuilder(128);
        int firstMissing = HcclException.UNKNOWN_RANK;
        Throwable cause = null;
        int missing = 0;
        final List<Channel> toClose = new ArrayList<>();
        synchronized (lock)
        {
            final boolean gaveUpEarly = HcclException.UNKNOWN_RANK != fatalPeer;
            for (int j = 0; j < worldSize; j++)
            {
                if (j == rank || null != links.get(j) || !expected[j])
                {
                    continue;
                }
                missing++;
                final String status;
                if (j < rank)
                {
                    final Dialer d = firstDown(j);
                    String last = peerStatus[j];
                    final Channel ch = d.current;
                    if (gaveUpEarly && j == fatalPeer)
                    {
                        // What made connect() give up, even if another of the pair's connections is still trying.
                        if (null != ch)
                        {
                            toClose.add(ch);
                        }
                    }
                    else if (null != ch)
                    {
                        // An attempt is still under way: its own timeout may not have fired yet.
                        toClose.add(ch);
                        if (ch.isActive())
                        {
                            last = "timeout: no handshake reply from " + d.address;
                        }
                        else if (d.attempts <= 1)
                        {
                            last = "timeout: TCP connect to " + d.address + " did not complete";
                        }
                        // else: keep what the earlier attempts learned (refused, ...), more telling than "pending".
                    }
                    status = (gaveUpEarly && j != fatalPeer ? "not yet connected, last: " + last : last) +
                        " (" + d.attempts + " attempt" + (1 == d.attempts ? "" : "s") + ")";
                }
                else
                {
                    final String base = null != peerStatus[j] ? peerStatus[j] : "no connection from rank " + j;
                    status = gaveUpEarly ? "not yet connected: " + base : "timeout: " + base;
                }
                sb.append("; rank ").append(j);
                if (j < rank)
                {
                    sb.append(" at ").append(dialers[j][0].address);
                }
                sb.append(": ").append(status);
                if (HcclException.UNKNOWN_RANK == firstMissing)
                {
                    firstMissing = j;
                    cause = peerCause[j];
                }
            }
            if (gaveUpEarly)
            {
                firstMissing = fatalPeer;
                cause = peerCause[fatalPeer];
            }
        }
        for (final Channel ch : toClose)
        {
            ch.close();
        }
        final String message = "rank " + rank + " could not connect to " + missing + " of " + wanted +
            " peers within " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs) + " ms" + sb;
        LOG.error("{}", message);
        return new HcclException(
            ErrorCode.E_TCP_CONNECT, rank, firstMissing, Operation.INIT, HcclException.NO_SEQUENCE, message, cause);
    }

    /** The first of a lower peer's dialers whose connection is not up. Caller holds lock. */
    private Dialer firstDown(final int peer)
    {
        for (final Dialer d : dialers[peer])
        {
            if (!isUp(peer, d.connection))
            {
                return d;
            }
        }
        return dialers[peer][0];
    }

    private static String describeDialFailure(final InetSocketAddress address, final Throwable cause)
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

    /**
     * Dials one connection to a lower rank until it answers, is rejected, or the connect deadline passes.
     */
    final class Dialer implements Runnable
    {
        private final int peer;
        private final int connection;
        private final InetSocketAddress address;
        /** The event loop of this connection: a pair's connections take turns over threadsPerPeer threads. */
        private final EventLoop loop;
        private final long deadlineNs;
        private long backoffMs = DIAL_BACKOFF_INITIAL_MS;
        private volatile int attempts;
        private volatile Channel current;

        Dialer(final int peer, final int connection, final InetSocketAddress address, final long deadlineNs)
        {
            this.peer = peer;
            this.connection = connection;
            this.address = address;
            this.loop = loops[(peer + connection % threadsPerPeer) % loops.length];
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
            if (closing || connectEnded || leftNs <= 0)
            {
                return;
            }
            attempts++;
            final int connectTimeoutMs = (int)Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(leftNs)));
            final Bootstrap b = new Bootstrap()
                .group(loop)
                .channel(socketChannelClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.RCVBUF_ALLOCATOR, readBuffers())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs)
                .handler(new ChannelInitializer<Channel>()
                {
                    @Override
                    protected void initChannel(final Channel ch)
                    {
                        // Set here, at registration, so it is in place before the connect can complete or fail.
                        current = ch;
                        trackHandshake(ch);
                        ch.pipeline().addLast(HANDSHAKE_HANDLER, new DialerHandshake(NettyTransport.this, Dialer.this));
                    }
                });
            try
            {
                final ChannelFuture f = b.connect(address);
                f.addListener((ChannelFutureListener)cf ->
                {
                    if (!cf.isSuccess())
                    {
                        attemptFailed(describeDialFailure(address, cf.cause()), cf.cause());
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
            if (closing || connectEnded || leftMs <= 0)
            {
                return;
            }
            final long delayMs = Math.min(backoffMs, leftMs);
            backoffMs = Math.min(backoffMs * 2, DIAL_BACKOFF_MAX_MS);
            LOG.debug("rank {}: dial of rank {} at {}: {}; retrying in {} ms", rank, peer, address, status, delayMs);
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
            LOG.warn("rank {}: connection to rank {} at {} failed: {}", rank, peer, address, status);
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
         * Records how the current attempt ended. Status and attempt change together under the lock, so that
         * connectFailure() never sees a finished attempt with a stale status, or the reverse.
         */
        private void record(final String status, final Throwable cause, final boolean fatal)
        {
            synchronized (lock)
            {
                current = null;
                // Once a peer has made connect() give up, what its other connections see later is no news.
                if (!isUp(peer, connection) && fatalPeer != peer)
                {
                    peerStatus[peer] = status;
                    peerCause[peer] = cause;
                    if (fatal && HcclException.UNKNOWN_RANK == fatalPeer)
                    {
                        fatalPeer = peer;
                        lock.notifyAll();
                    }
                }
            }
        }
    }

    /**
     * Settings of a {@link NettyTransport}: set what is needed, then {@link NettyTransport#bind(Context)}.
     */
    public static final class Context
    {
        private int rank = -1;
        private int worldSize = -1;
        private String jobToken;
        private long commId;
        private InetAddress bindAddress = InetAddress.getLoopbackAddress();
        private int maxFrameBytes = MAX_FRAME_BYTES_DEFAULT;
        private int ioThreads = IO_THREADS_DEFAULT;
        private int connectionsPerPeer = 1;
        private int threadsPerPeer = 1;
        private Duration connectTimeout = CONNECT_TIMEOUT_DEFAULT;
        private Inbound inbound;

        /**
         * This process's rank in the root communicator. Required.
         *
         * @param rank 0 to worldSize - 1.
         * @return this.
         */
        public Context rank(final int rank)
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
        public Context worldSize(final int worldSize)
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
        public Context jobToken(final String jobToken)
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
        public Context commId(final long commId)
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
        public Context bindAddress(final InetAddress bindAddress)
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
        public Context maxFrameBytes(final int maxFrameBytes)
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
         * Number of I/O threads. Defaults to {@link #IO_THREADS_DEFAULT}: none, the threads that wait for
         * transfers drive the I/O through {@link NettyTransport#progressEngine()}, which halves a small message's
         * latency; with threads, the I/O of many peers can use more cores.
         *
         * @param ioThreads 0 to {@value #IO_THREADS_MAX}.
         * @return this.
         */
        public Context ioThreads(final int ioThreads)
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
         * @param connections 1 to {@value NettyTransport#CONNECTIONS_PER_PEER_MAX}.
         * @return this.
         */
        public Context connectionsPerPeer(final int connections)
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
        public Context threadsPerPeer(final int threads)
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
        public Context connectTimeout(final Duration connectTimeout)
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
         * Where received messages and link events go. Required.
         *
         * @param inbound the communicator layer's receiver.
         * @return this.
         */
        public Context inbound(final Inbound inbound)
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
        public Context conclude()
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
            if (null == inbound)
            {
                throw new IllegalArgumentException("inbound: must be set");
            }
            return this;
        }
    }
}
