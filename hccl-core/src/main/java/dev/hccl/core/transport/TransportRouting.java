package dev.hccl.core.transport;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.spi.TransportKind;
import dev.hccl.api.spi.TransportProvider;
import dev.hccl.core.events.ConnectionEvent;
import dev.hccl.core.events.Recordings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Which transport serves each peer of this rank, as NCCL picks one per pair: the transports are tried in order of
 * preference, each for the peers not yet served that it can connect; a pair one transport fails to connect (on both
 * of its ranks alike) falls to the next. The transports left without a peer are closed (a single-node job over
 * shared memory does not keep a TCP port open).
 */
public final class TransportRouting implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(TransportRouting.class);

    /**
     * A transport opened by its provider.
     *
     * @param name      the provider's name, under which its address is published.
     * @param kind      what the provider says its transport is.
     * @param transport this rank's end.
     */
    public record Opened(String name, TransportKind kind, Transport transport)
    {
    }

    private final Transport[] byPeer;
    /** The provider's name of each peer's transport, such as {@code shm}. */
    private final String[] nameByPeer;
    /** What each peer's transport is. */
    private final TransportKind[] kindByPeer;
    private final List<Transport> inUse;
    private final boolean inProcess;
    private final ProgressEngine engine;
    /** The first arena a transport in use offers, in order of preference; null when none does. */
    private final NodeArena nodeArena;

    private TransportRouting(final Transport[] byPeer, final String[] nameByPeer, final TransportKind[] kindByPeer,
        final List<Opened> inUse)
    {
        this.byPeer = byPeer;
        this.nameByPeer = nameByPeer;
        this.kindByPeer = kindByPeer;
        this.inUse = inUse.stream().map(Opened::transport).toList();
        this.inProcess = inUse.stream().allMatch(o -> o.kind().inProcessPeers());
        final List<ProgressEngine> engines = new ArrayList<>();
        for (final Transport t : this.inUse)
        {
            if (t.progressEngine() != null)
            {
                engines.add(t.progressEngine());
            }
        }
        this.engine = CompositeProgressEngine.of(engines);
        this.nodeArena = this.inUse.stream().map(Transport::nodeArena).filter(Objects::nonNull).findFirst()
            .orElse(null);
    }

    /**
     * The memory the ranks of this node share for the collectives of the root communicator.
     *
     * @return the arena, its ranks being the root communicator's; null when no transport offers one.
     */
    public NodeArena nodeArena()
    {
        return nodeArena;
    }

    /**
     * One transport for every peer (the in-JVM transport).
     *
     * @param transport the transport.
     * @param kind      what it is.
     * @param worldSize the ranks.
     * @return the routing.
     */
    public static TransportRouting single(final Transport transport, final TransportKind kind, final int worldSize)
    {
        final Transport[] byPeer = new Transport[worldSize];
        Arrays.fill(byPeer, transport);
        final String[] names = new String[worldSize];
        Arrays.fill(names, transport.name());
        final TransportKind[] kinds = new TransportKind[worldSize];
        Arrays.fill(kinds, kind);
        return new TransportRouting(byPeer, names, kinds, List.of(new Opened(transport.name(), kind, transport)));
    }

    /**
     * Whether every peer is a thread of this process (the in-JVM transport), so that a message is delivered before its
     * send returns.
     *
     * @return true for ranks as threads.
     */
    public boolean inProcess()
    {
        return inProcess;
    }

    /**
     * Opens every provider's transport, most preferred first; those that decline (turned off, unusable here) are left
     * out.
     *
     * @param providers  the plug-ins found.
     * @param contextFor this rank's context for a transport's name (each has its own keys in the rendezvous).
     * @return the transports opened, in order of preference.
     */
    public static List<Opened> open(
        final Iterable<TransportProvider> providers, final Function<String, TransportContext> contextFor)
    {
        final List<TransportProvider> ordered = new ArrayList<>();
        final Set<String> names = new LinkedHashSet<>();
        for (final TransportProvider provider : providers)
        {
            if (names.add(provider.name()))
            {
                ordered.add(provider);
            }
        }
        ordered.sort(Comparator.comparingInt(TransportProvider::preference).reversed()
            .thenComparing(TransportProvider::name));
        final List<Opened> opened = new ArrayList<>();
        try
        {
            for (final TransportProvider provider : ordered)
            {
                final Transport transport = provider.open(contextFor.apply(provider.name()));
                if (transport != null)
                {
                    opened.add(new Opened(provider.name(), provider.kind(), transport));
                }
            }
        }
        catch (final RuntimeException ex)
        {
            opened.forEach(o -> o.transport().close());
            throw ex;
        }
        return opened;
    }

    /**
     * Connects every peer through the most preferred transport that can connect the pair.
     *
     * @param rank          this rank.
     * @param opened        the transports, in order of preference; those left without a peer are closed.
     * @param endpoint      each rank's endpoint for a transport's name: its node and that transport's address.
     * @param worldSize     the ranks.
     * @param deadlineNanos when to give up.
     * @return the routing.
     * @throws HcclException E_UNAVAIL naming the ranks no transport reaches; or what a transport's connect throws.
     */
    public static TransportRouting connect(
        final int rank,
        final List<Opened> opened,
        final EndpointTable endpoint,
        final int worldSize,
        final long deadlineNanos)
    {
        final Transport[] byPeer = new Transport[worldSize];
        final String[] nameByPeer = new String[worldSize];
        final TransportKind[] kindByPeer = new TransportKind[worldSize];
        final Set<Integer> left = new TreeSet<>();
        for (int r = 0; r < worldSize; r++)
        {
            if (r != rank)
            {
                left.add(r);
            }
        }
        final List<Opened> inUse = new ArrayList<>();
        final StringBuilder choice = new StringBuilder();
        try
        {
            for (final Opened o : opened)
            {
                final PeerEndpoint self = endpoint.of(o.name(), rank);
                final List<PeerEndpoint> candidates = new ArrayList<>();
                for (final int peer : left)
                {
                    final PeerEndpoint other = endpoint.of(o.name(), peer);
                    if (self.address() != null && other.address() != null && o.transport().canConnect(self, other))
                    {
                        candidates.add(other);
                    }
                }
                final ConnectionEvent event = Recordings.started() ? new ConnectionEvent() : null;
                if (null != event)
                {
                    event.begin();
                }
                final Set<Integer> connected = candidates.isEmpty() ? Set.of() :
                    o.transport().connect(self, candidates, deadlineNanos);
                if (connected.isEmpty())
                {
                    continue;
                }
                if (null != event && event.shouldCommit())
                {
                    event.rank = rank;
                    event.worldSize = worldSize;
                    event.transport = o.transport().name();
                    event.peers = ranges(connected);
                    event.peerCount = connected.size();
                    event.commit();
                }
                for (final int peer : connected)
                {
                    byPeer[peer] = o.transport();
                    nameByPeer[peer] = o.name();
                    kindByPeer[peer] = o.kind();
                }
                left.removeAll(connected);
                inUse.add(o);
                choice.append(choice.length() == 0 ? "" : "; ").append(o.transport().name()).append(" to ")
                    .append(ranges(connected));
            }
            if (!left.isEmpty())
            {
                throw new HcclException(ErrorCode.E_UNAVAIL, rank, left.iterator().next(), Operation.INIT,
                    HcclException.NO_SEQUENCE, "no transport can reach rank" + (left.size() == 1 ? " " : "s ") + left +
                    " (transports opened: " + names(opened) + ")", null);
            }
        }
        catch (final RuntimeException ex)
        {
            opened.forEach(o -> o.transport().close());
            throw ex;
        }
        for (final Opened o : opened)
        {
            if (!inUse.contains(o))
            {
                o.transport().close();
            }
        }
        if (worldSize > 1)
        {
            LOG.debug("rank {}: transports: {}", rank, choice);
        }
        return new TransportRouting(byPeer, nameByPeer, kindByPeer, inUse);
    }

    /**
     * Each rank's endpoint for a transport, from what the rendezvous gathered.
     */
    @FunctionalInterface
    public interface EndpointTable
    {
        /**
         * A rank's endpoint.
         *
         * @param transport the transport's (provider's) name.
         * @param rank      the rank.
         * @return its node and its address for that transport (null when it did not open it).
         */
        PeerEndpoint of(String transport, int rank);
    }

    /**
     * The link to a peer, through the transport that serves it.
     *
     * @param peer a rank other than this one.
     * @return the link.
     */
    public Link link(final int peer)
    {
        return byPeer[peer].link(peer);
    }

    /**
     * The transport that serves a peer.
     *
     * @param peer a rank other than this one.
     * @return its provider's name, such as {@code shm} or {@code tcp}.
     */
    public String transportTo(final int peer)
    {
        return nameByPeer[peer];
    }

    /**
     * What the transport that serves a peer is.
     *
     * @param peer a rank other than this one.
     * @return its kind.
     */
    public TransportKind kindTo(final int peer)
    {
        return kindByPeer[peer];
    }

    /**
     * The transports in use, for logs and headers.
     *
     * @return their names joined by {@code +}, most preferred first, such as {@code shm+tcp/epoll}; {@code none}
     * for a rank with no peers.
     */
    public String names()
    {
        final StringBuilder sb = new StringBuilder();
        for (final Transport t : inUse)
        {
            sb.append(sb.length() == 0 ? "" : "+").append(t.name());
        }
        return sb.length() == 0 ? "none" : sb.toString();
    }

    /**
     * The engine that waiting threads drive: every transport in use that has one.
     *
     * @return the engine, or null when every transport completes transfers on threads of its own.
     */
    public ProgressEngine progressEngine()
    {
        return engine;
    }

    /** Closes every transport in use. */
    @Override
    public void close()
    {
        for (final Transport t : inUse)
        {
            t.close();
        }
    }

    private static String names(final List<Opened> opened)
    {
        final List<String> names = new ArrayList<>();
        opened.forEach(o -> names.add(o.name()));
        return names.toString();
    }

    /** Ranks as ranges: {@code [1-3, 5]}. */
    static String ranges(final Set<Integer> ranks)
    {
        final StringBuilder sb = new StringBuilder("[");
        int start = -2;
        int prev = -2;
        for (final int r : new TreeSet<>(ranks))
        {
            if (r != prev + 1)
            {
                if (start >= 0)
                {
                    sb.append(start == prev ? "" + start : start + "-" + prev).append(", ");
                }
                start = r;
            }
            prev = r;
        }
        if (start >= 0)
        {
            sb.append(start == prev ? "" + start : start + "-" + prev);
        }
        return sb.append(']').toString();
    }
}
