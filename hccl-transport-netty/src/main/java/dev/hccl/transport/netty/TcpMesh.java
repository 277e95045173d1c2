package dev.hccl.transport.netty;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import io.netty.channel.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The TCP transport's full mesh: which links are up, the {@link Dialer}s that bring up those to lower ranks, the
 * admission of those from higher ranks, and, when the mesh cannot be completed, the error that says for each missing
 * peer what went wrong. A link is up when every one of its connections has completed its handshake; until then it is
 * "building". One lock guards all of it; {@link #links} is also readable without it.
 */
final class TcpMesh
{
    private static final Logger LOG = LoggerFactory.getLogger(NettyTransport.class);

    private final NettyTransport transport;
    private final int rank;
    private final int worldSize;
    private final int connectionsPerPeer;
    private final long connectTimeoutNs;
    /** The links that can carry messages: every connection of the pair is up. */
    private final AtomicReferenceArray<TcpLink> links;

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

    TcpMesh(final NettyTransport transport, final int connectionsPerPeer, final long connectTimeoutNs)
    {
        this.transport = transport;
        this.rank = transport.rank();
        this.worldSize = transport.worldSize();
        this.connectionsPerPeer = connectionsPerPeer;
        this.connectTimeoutNs = connectTimeoutNs;
        this.links = new AtomicReferenceArray<>(worldSize);
        this.peerStatus = new String[worldSize];
        this.peerCause = new Throwable[worldSize];
        this.building = new TcpLink[worldSize];
    }

    /**
     * The link to a peer, once every connection of it is up.
     *
     * @param peer the peer.
     * @return the link, or null.
     */
    TcpLink link(final int peer)
    {
        return links.get(peer);
    }

    /**
     * Stops the mesh from growing: no connection is admitted or registered after this, and a {@link #connect} under
     * way returns.
     *
     * @return the links, up or building, to close; null when closing had begun already.
     */
    List<TcpLink> close()
    {
        synchronized (lock)
        {
            if (closing)
            {
                return null;
            }
            closing = true;
            lock.notifyAll();
            final List<TcpLink> all = new ArrayList<>();
            for (int i = 0; i < worldSize; i++)
            {
                final TcpLink link = null != links.get(i) ? links.get(i) : building[i];
                if (null != link)
                {
                    all.add(link);
                }
            }
            return all;
        }
    }

    boolean isClosing()
    {
        return closing;
    }

    /**
     * Whether dialing should stop: the transport is closing or {@link #connect} has returned.
     *
     * @return true when a dialer should give up.
     */
    boolean connectOver()
    {
        return closing || connectEnded;
    }

    /**
     * Builds the links to the peers {@code expected} names: dials every lower one (retrying refused connections with
     * a short backoff) and waits for every higher one to dial in; a peer not expected (the pair uses another
     * transport) is refused if it dials. Blocks until every link has completed its handshake, a dial is rejected, or
     * the connect timeout passes. Call once.
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
                        dialers[j][k] = new Dialer(transport, this, j, k, peers[j], deadlineNs);
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
                final int threads = transport.threadsPerPeer();
                LOG.debug("rank {}: connected to {} peers in {} ms over {}{}",
                    rank, wanted, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs), transport.name(),
                    1 == connectionsPerPeer ? "" : ", " + connectionsPerPeer + " connections each on " +
                        threads + " thread" + (1 == threads ? "" : "s"));
                return;
            }
        }
        throw connectFailure(startNs);
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
     * @param proven  whether the dialer proved the job key.
     * @param channel its channel.
     * @return the connection, or why it is refused.
     */
    Admission admit(final Handshake.Hello hello, final boolean proven, final Channel channel)
    {
        final String reason = checkHello(hello, proven);
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
                        rank + " " + connectionsPerPeer + "; " + TcpTransportProvider.SOCKET_NSOCKS.variable() + " x " +
                        TcpTransportProvider.SOCKET_NTHREADS.variable() + " must be the same on every rank";
                }
            }
            if (null != refusal)
            {
                if (proven && peer > rank && peer < worldSize && null == links.get(peer))
                {
                    // Remembered so that a timeout names the real trouble, not just "no connection"; an unproven
                    // claim may be a stranger's, and must not put words in a rank's mouth.
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


    /**
     * Records how a dialer's attempt ended. Status and attempt change together under the lock, so that
     * connectFailure() never sees a finished attempt with a stale status, or the reverse.
     *
     * @param dialer the dialer.
     * @param status why, for the error message.
     * @param cause  the cause, or null.
     * @param fatal  true when retrying cannot help: connect() fails at once.
     */
    void recordAttempt(final Dialer dialer, final String status, final Throwable cause, final boolean fatal)
    {
        final int peer = dialer.peer();
        synchronized (lock)
        {
            dialer.attemptEnded();
            // Once a peer has made connect() give up, what its other connections see later is no news.
            if (!isUp(peer, dialer.connection()) && fatalPeer != peer)
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

    /**
     * Test hook: whether connection {@code index} to {@code peer} has completed its handshake, on a link complete or
     * still building.
     *
     * @param peer  the peer.
     * @param index which of the pair's connections.
     * @return true once it is registered.
     */
    boolean connected(final int peer, final int index)
    {
        synchronized (lock)
        {
            return isUp(peer, index);
        }
    }

    // -----------------------------------------------------------------------------------------------------------

    private String checkHello(final Handshake.Hello hello, final boolean proven)
    {
        if (!proven)
        {
            return "job token mismatch (authentication failed)";
        }
        final long commId = transport.commId();
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
        if (hello.connections() < 1 || hello.connections() > TcpSettings.CONNECTIONS_PER_PEER_MAX ||
            hello.connection() >= hello.connections())
        {
            return "connection " + hello.connection() + " of " + hello.connections() + " is out of range (at most " +
                TcpSettings.CONNECTIONS_PER_PEER_MAX + " connections per peer)";
        }
        return null;
    }

    /**
     * Whether connection {@code index} to {@code peer} has completed its handshake. An index beyond this rank's
     * connections per pair (a peer set up with more) never has. Caller holds lock.
     */
    private boolean isUp(final int peer, final int index)
    {
        return null != links.get(peer) ||
            (null != building[peer] && index < connectionsPerPeer && building[peer].has(index));
    }

    private TcpConnection register(final int peer, final int index, final Channel channel)
    {
        // Caller holds lock.
        TcpLink link = building[peer];
        if (null == link)
        {
            link = new TcpLink(transport, peer, connectionsPerPeer);
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
                    final Channel ch = d.current();
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
                            last = "timeout: no handshake reply from " + d.address();
                        }
                        else if (d.attempts() <= 1)
                        {
                            last = "timeout: TCP connect to " + d.address() + " did not complete";
                        }
                        // else: keep what the earlier attempts learned (refused, ...), more telling than "pending".
                    }
                    status = (gaveUpEarly && j != fatalPeer ? "not yet connected, last: " + last : last) +
                        " (" + d.attempts() + " attempt" + (1 == d.attempts() ? "" : "s") + ")";
                }
                else
                {
                    final String base = null != peerStatus[j] ? peerStatus[j] : "no connection from rank " + j;
                    status = gaveUpEarly ? "not yet connected: " + base : "timeout: " + base;
                }
                sb.append("; rank ").append(j);
                if (j < rank)
                {
                    sb.append(" at ").append(dialers[j][0].address());
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
            if (!isUp(peer, d.connection()))
            {
                return d;
            }
        }
        return dialers[peer][0];
    }
}
