package dev.hccl.transport.shm;

import dev.hccl.api.CommConfig;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.Bootstrap;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The shared-memory transport between ranks of one node: per pair of ranks, a segment holding two Agrona
 * single-producer single-consumer rings, one each way.
 * <p>
 * <b>Life.</b> {@link ShmTransportProvider} opens it on a directory ({@code HCCL_SHM_DIR}); {@link #connect} sets the
 * pairs up through the bootstrap store ({@link ShmHandshake}) and leaves no file there, so a rank killed afterwards
 * leaves nothing behind; {@link #close()} says GOODBYE and releases the memory.
 * <p>
 * <b>Threading.</b> Sends come from any thread and copy straight into the ring. The rest is done by the thread that
 * drives {@link #progressEngine()}: one that waits for a transfer, or, while none has for a few milliseconds, the
 * watch thread ({@code hccl-shm-<rank>-watch}, {@link ShmWatch}), which also writes this rank's heartbeat and checks
 * the peers'. Every {@link Inbound} callback runs on the driving thread, in the ring's order per peer; callbacks must
 * not block or call {@link #close()} (the memory would stay mapped until the process exits).
 * <p>
 * <b>Failures.</b> A dead or hung peer, a protocol error or a throwing sink fails the link once, reported to
 * {@link Inbound#onLinkFailure} with an {@link java.io.IOException} naming the peer; GOODBYE is reported to
 * {@link Inbound#onPeerClosed}, ABORT to {@link Inbound#onAbort}. Nothing is reported once close has begun.
 */
public final class ShmTransport implements Transport
{
    /** Default capacity of each ring, one per direction of a pair. */
    public static final int RING_BYTES_DEFAULT = 1 << 20;
    /** How long {@link #close()} waits for a thread that drives, sends or watches to leave the memory. */
    static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** How long {@link #close()} retries GOODBYEs into full rings. */
    static final long GOODBYE_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private static final Logger LOG = LoggerFactory.getLogger(ShmTransport.class);

    private final int rank;
    private final int worldSize;
    private final ShmNames names;
    private final Inbound inbound;
    private final Bootstrap bootstrap;
    private final Path dir;
    private final ShmAddress address;
    private final int ringBytes;
    /** Each member's bytes in the node arena ({@code HCCL_SHM_ARENA_SIZE}); 0: none. */
    private final int arenaBytes;
    private final long heartbeatTimeoutMillis;
    /** Whether DATA records carry a CRC32C of their payload ({@code HCCL_CHECKSUM}), as every rank agrees. */
    private final boolean checksum;
    /** {@code HCCL_CMA}: the arena's members may read each other's ordinary buffers across processes. */
    private final boolean cma;
    private final ShmProgress progress;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean closing;
    /** Connected peers by rank; null before connect. */
    private volatile ShmPeer[] byRank;

    private final ReentrantLock lifecycle = new ReentrantLock();
    // Guarded by lifecycle.
    private boolean connectCalled;
    private ShmPeer[] connected = new ShmPeer[0];
    private ShmWatch watch;
    private ShmHandshake handshake;
    /** The node arena, once agreed; null when there is none. Read without the lock once connect has returned. */
    private volatile ShmArena arena;

    /**
     * This rank's end, with the default ring size and the configuration's heartbeat timeout
     * ({@code HCCL_HEARTBEAT_TIMEOUT}).
     *
     * @param context the rank, its configuration and where inbound messages go.
     * @param dir     the directory of the segments: an existing, writable directory, absolute.
     */
    ShmTransport(final TransportContext context, final Path dir)
    {
        this(context, dir, RING_BYTES_DEFAULT, Math.max(1, context.config().heartbeatTimeout().toMillis()));
    }

    /**
     * This rank's end.
     *
     * @param context                the rank, its configuration and where inbound messages go.
     * @param dir                    the directory of the segments: an existing, writable directory, absolute.
     * @param ringBytes              the capacity of each ring of the pairs this rank creates (it is the lower
     *                               rank's that counts): a power of two.
     * @param heartbeatTimeoutMillis how old a peer's heartbeat may grow before the peer counts as dead.
     */
    ShmTransport(
        final TransportContext context, final Path dir, final int ringBytes, final long heartbeatTimeoutMillis)
    {
        if (heartbeatTimeoutMillis <= 0)
        {
            throw new IllegalArgumentException("heartbeatTimeoutMillis must be positive, got " + heartbeatTimeoutMillis);
        }
        this.rank = context.rank();
        this.worldSize = context.worldSize();
        this.names = new ShmNames(context.jobToken(), context.commId());
        this.inbound = context.inbound();
        this.bootstrap = context.bootstrap();
        this.dir = dir.toAbsolutePath();
        this.address = ShmAddress.ofThisProcess(this.dir);
        this.ringBytes = ShmSegment.checkRingBytes(ringBytes);
        this.arenaBytes = context.config().get(ShmTransportProvider.ARENA_SIZE);
        this.heartbeatTimeoutMillis = heartbeatTimeoutMillis;
        this.checksum = context.config().get(CommConfig.CHECKSUM);
        this.cma = context.config().get(ShmTransportProvider.CMA);
        this.progress = new ShmProgress(inbound);
    }

    /**
     * {@inheritDoc}
     *
     * @return {@code shm}.
     */
    @Override
    public String name()
    {
        return "shm";
    }

    /**
     * {@inheritDoc}
     *
     * @return the directory, this process's pid and its start time.
     */
    @Override
    public byte[] localAddress()
    {
        return address.encode();
    }

    /**
     * {@inheritDoc}
     * <p>
     * True when the peer opened this transport on the same node ({@code nodeId}) and directory path. The pair may
     * still fail to connect (the directory is not shared after all, no room), and then falls back.
     */
    @Override
    public boolean canConnect(final PeerEndpoint self, final PeerEndpoint peer)
    {
        final ShmAddress theirs = ShmAddress.decode(peer.address());
        return null != theirs && null != self.nodeId() && self.nodeId().equals(peer.nodeId()) &&
            address.dir().equals(theirs.dir());
    }

    /**
     * {@inheritDoc}
     *
     * @throws HcclException            {@link ErrorCode#E_TIMEOUT} naming a peer that did not answer the handshake
     *                                  by the deadline; {@link ErrorCode#E_UNAVAIL} when closed meanwhile.
     * @throws IllegalArgumentException for a peer that {@link #canConnect} refuses, this rank, or one given twice.
     * @throws IllegalStateException    when called twice.
     */
    @Override
    public Set<Integer> connect(final PeerEndpoint self, final List<PeerEndpoint> peers, final long deadlineNanos)
    {
        Objects.requireNonNull(self, "self");
        Objects.requireNonNull(peers, "peers");
        lifecycle.lock();
        try
        {
            if (connectCalled)
            {
                throw new IllegalStateException("connect() has already been called");
            }
            connectCalled = true;
            if (closing)
            {
                throw new HcclException(
                    ErrorCode.E_UNAVAIL, rank, HcclException.UNKNOWN_RANK, Operation.INIT, HcclException.NO_SEQUENCE,
                    "the shared-memory transport is closed", null);
            }
            final Map<Integer, ShmAddress> addresses = new TreeMap<>();
            for (final PeerEndpoint p : peers)
            {
                if (p.rank() < 0 || p.rank() >= worldSize || p.rank() == rank)
                {
                    throw new IllegalArgumentException("peer rank " + p.rank() + " of " + worldSize + " on rank " + rank);
                }
                if (!canConnect(self, p))
                {
                    throw new IllegalArgumentException("rank " + p.rank() + " cannot connect over shared memory");
                }
                if (null != addresses.put(p.rank(), ShmAddress.decode(p.address())))
                {
                    throw new IllegalArgumentException("rank " + p.rank() + " given twice");
                }
            }

            final long start = System.nanoTime();
            handshake = new ShmHandshake(rank, names, dir, ringBytes, bootstrap, () -> closing);
            final Map<Integer, ShmSegment> segments = handshake.run(addresses.keySet(), deadlineNanos);

            final ShmPeer[] ps = new ShmPeer[segments.size()];
            final ShmPeer[] table = new ShmPeer[worldSize];
            int i = 0;
            for (final Map.Entry<Integer, ShmSegment> e : segments.entrySet())
            {
                final int peer = e.getKey();
                ps[i++] = table[peer] = new ShmPeer(rank, peer, e.getValue(), addresses.get(peer), inbound, checksum,
                    this::arenaDamage);
            }
            connected = ps;
            progress.peers(ps);
            byRank = table;
            if (ps.length > 0)
            {
                watch = new ShmWatch(rank, ps, progress, heartbeatTimeoutMillis);
                watch.start();
            }
            final Set<Integer> ranks = Collections.unmodifiableSet(new TreeSet<>(segments.keySet()));
            arena = new ArenaHandshake(rank, names, dir, bootstrap, handshake, checksum, cma)
                .run(ranks, arenaBytes, deadlineNanos);
            if (!addresses.isEmpty())
            {
                LOG.debug("rank {}: shared memory with {} of {} peers {} in {} ms ({} KiB rings, {}, in {})",
                    rank, ranks.size(), addresses.size(), ranks,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), ringBytes / 1024,
                    null == arena ? "no node arena" : arena, dir);
            }
            return ranks;
        }
        finally
        {
            lifecycle.unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException when {@code peer} is out of range or this rank.
     * @throws IllegalStateException    when {@link #connect} did not connect {@code peer}.
     */
    @Override
    public Link link(final int peer)
    {
        if (peer < 0 || peer >= worldSize || peer == rank)
        {
            throw new IllegalArgumentException(
                "peer: must be in [0, " + worldSize + ") and not this rank " + rank + ", got " + peer);
        }
        final ShmPeer[] table = byRank;
        final ShmPeer p = null == table ? null : table[peer];
        if (null == p)
        {
            throw new IllegalStateException("rank " + rank + " has no shared-memory link to rank " + peer);
        }
        return p.link;
    }

    /** What is wrong with the node arena's memory, or null when it is sound or there is none. */
    private String arenaDamage()
    {
        final ShmArena a = arena;
        return null == a ? null : a.damage();
    }

    /**
     * {@inheritDoc}
     * <p>
     * One file for this rank and every peer it connected, when they all connected each other and agreed
     * ({@link ArenaHandshake}); its regions are {@code HCCL_SHM_ARENA_SIZE} bytes each.
     */
    @Override
    public ShmArena nodeArena()
    {
        return arena;
    }

    /**
     * {@inheritDoc}
     * <p>
     * The waiting threads drive it; it never wakes on arrival ({@link ProgressEngine#wakesOnArrival()} is false).
     *
     * @return the engine.
     */
    @Override
    public ProgressEngine progressEngine()
    {
        return progress;
    }

    /**
     * {@inheritDoc}
     * <p>
     * Says GOODBYE on every open link (best effort: a peer whose ring stays full notices the missing heartbeat
     * instead), fails the sends not yet in the rings, stops the watch, and unmaps the memory once no thread can touch
     * it: it waits up to 2 s each for senders, the watch, and the drive lock (or its holder to leave its poll, which it
     * does not re-enter once closing). Failing that, it leaves the mapping to the process's exit (logged at DEBUG), as
     * unmapping memory a thread still touches would crash the JVM. Failures are not reported once this has begun.
     */
    @Override
    public void close()
    {
        if (!closed.compareAndSet(false, true))
        {
            return;
        }
        closing = true;
        progress.stop();
        lifecycle.lock();
        try
        {
            final ShmArena a = arena;
            if (null != a && !a.close(CLOSE_WAIT_NANOS))
            {
                LOG.debug("rank {}: a thread is still inside the node arena; its mapping is left to the process's " +
                    "exit", rank);
            }
            final ShmPeer[] ps = connected;
            final long goodbyeDeadline = System.nanoTime() + GOODBYE_WAIT_NANOS;
            boolean quiet = true;
            for (final ShmPeer p : ps)
            {
                quiet &= p.link.close(goodbyeDeadline, CLOSE_WAIT_NANOS);
            }
            if (null != watch)
            {
                quiet &= watch.stop(TimeUnit.NANOSECONDS.toMillis(CLOSE_WAIT_NANOS));
            }
            final ShmProgress.Quiet drivers = progress.closeAndQuiesce(CLOSE_WAIT_NANOS);
            try
            {
                if (quiet && ShmProgress.Quiet.NO != drivers)
                {
                    for (final ShmPeer p : ps)
                    {
                        p.segment.unmap();
                    }
                }
                else if (ps.length > 0)
                {
                    LOG.debug("rank {}: a thread may still touch the shared memory (a sender, the watch, or the " +
                        "driving thread, or close() was called from one); the mapping is left to the process's exit",
                        rank);
                }
            }
            finally
            {
                if (ShmProgress.Quiet.HELD == drivers)
                {
                    progress.release();
                }
            }
            if (null != handshake)
            {
                handshake.deleteOwnFiles();
            }
            LOG.debug("rank {}: shared-memory transport closed", rank);
        }
        finally
        {
            lifecycle.unlock();
        }
    }

    /**
     * The directory of the segments.
     *
     * @return the absolute path.
     */
    Path directory()
    {
        return dir;
    }

    /**
     * Test hook: whether close released every segment's mapping.
     *
     * @return true when there were segments and all are unmapped.
     */
    boolean memoryReleasedForTest()
    {
        lifecycle.lock();
        try
        {
            boolean all = connected.length > 0;
            for (final ShmPeer p : connected)
            {
                all &= p.segment.isUnmapped();
            }
            return all;
        }
        finally
        {
            lifecycle.unlock();
        }
    }

    /**
     * Test hook: what this rank holds for a connected peer.
     *
     * @param peer the peer's rank.
     * @return its segment, rings and link, or null when not connected.
     */
    ShmPeer peerForTest(final int peer)
    {
        final ShmPeer[] table = byRank;
        return null == table ? null : table[peer];
    }

    /**
     * Test hook: stops the watch thread, so that this rank's heartbeat stops as a hung process's would.
     */
    void stopWatchForTest()
    {
        lifecycle.lock();
        try
        {
            if (null != watch)
            {
                watch.stop(TimeUnit.NANOSECONDS.toMillis(CLOSE_WAIT_NANOS));
            }
        }
        finally
        {
            lifecycle.unlock();
        }
    }
}
