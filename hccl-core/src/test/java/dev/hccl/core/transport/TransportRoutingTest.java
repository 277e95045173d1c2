package dev.hccl.core.transport;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.spi.TransportKind;
import dev.hccl.api.spi.TransportProvider;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntPredicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TransportRoutingTest
{
    /** Ranks 0-2 on node a, 3-4 on node b. */
    private static final String[] NODES = { "a", "a", "a", "b", "b" };
    private static final TransportKind MEMORY = TransportKind.sharedMemory(new TransportKind.LinkFigures(1e-6, 1e-10));
    private static final TransportKind NETWORK = TransportKind.network(new TransportKind.LinkFigures(4e-6, 3e-10),
        new TransportKind.LinkFigures(30e-6, 1e-9));

    @Test
    void eachPairTakesTheMostPreferredTransportThatConnectsItAndAFailedPairFallsToTheNext()
    {
        // Rank 1's view: "mem" reaches its node's ranks but fails the pair (1, 2), as a segment that does not fit.
        final Fake mem = new Fake("mem", (peer) -> peer != 2, true);
        final Fake net = new Fake("net", (peer) -> true, false);
        final TransportRouting routing = TransportRouting.connect(1,
            List.of(new TransportRouting.Opened("mem", MEMORY, mem), new TransportRouting.Opened("net", NETWORK, net)),
            this::endpoint, NODES.length, deadline());
        assertEquals(List.of(0, 2), mem.offered, "only the node's ranks are offered to the memory transport");
        assertEquals(List.of(2, 3, 4), net.offered, "the rest, with the pair that failed, go to the next");
        assertEquals("mem", routing.transportTo(0));
        assertEquals("net", routing.transportTo(2));
        assertEquals("net", routing.transportTo(4));
        assertSame(mem.link, routing.link(0));
        assertSame(net.link, routing.link(3));
        assertEquals("mem+net", routing.names());
        assertFalse(mem.closed || net.closed);
        routing.close();
        assertTrue(mem.closed && net.closed);
    }

    @Test
    void aTransportLeftWithoutPeersIsClosedSoItListensNoLonger()
    {
        final Fake mem = new Fake("mem", (peer) -> true, true);
        final Fake net = new Fake("net", (peer) -> true, false);
        final TransportRouting routing = TransportRouting.connect(0,
            List.of(new TransportRouting.Opened("mem", MEMORY, mem), new TransportRouting.Opened("net", NETWORK, net)),
            (name, r) -> new PeerEndpoint(r, "a", address(name, r)), 3, deadline());
        assertEquals("mem", routing.names());
        assertTrue(net.offered.isEmpty());
        assertTrue(net.closed, "a single-node job over shared memory keeps no TCP port open");
        assertFalse(mem.closed);
    }

    @Test
    void aRankThatNoTransportReachesFailsNamingItAndClosesEverything()
    {
        final Fake mem = new Fake("mem", (peer) -> true, true);
        final HcclException ex = assertThrows(HcclException.class, () -> TransportRouting.connect(0,
            List.of(new TransportRouting.Opened("mem", MEMORY, mem)), this::endpoint, NODES.length, deadline()));
        assertEquals(ErrorCode.E_UNAVAIL, ex.errorCode());
        assertTrue(ex.getMessage().contains("ranks [3, 4]"), ex.getMessage());
        assertTrue(mem.closed);
    }

    @Test
    void aPeerThatDidNotOpenATransportIsNotOfferedToIt()
    {
        final Fake mem = new Fake("mem", (peer) -> true, true);
        final Fake net = new Fake("net", (peer) -> true, false);
        // Rank 2 turned shared memory off: it published no "mem" address.
        TransportRouting.connect(0,
            List.of(new TransportRouting.Opened("mem", MEMORY, mem), new TransportRouting.Opened("net", NETWORK, net)),
            (name, r) -> new PeerEndpoint(r, NODES[r], "mem".equals(name) && r == 2 ? null : address(name, r)),
            NODES.length, deadline());
        assertEquals(List.of(1), mem.offered);
        assertEquals(List.of(2, 3, 4), net.offered);
    }

    @Test
    void providersAreOpenedInOrderOfPreferenceAndThoseThatDeclineAreLeftOut()
    {
        final List<String> asked = new ArrayList<>();
        final List<TransportProvider> providers = List.of(
            provider("net", 100, asked, new Fake("net", p -> true, false)),
            provider("off", 300, asked, null),
            provider("mem", 200, asked, new Fake("mem", p -> true, true)));
        final List<TransportRouting.Opened> opened = TransportRouting.open(providers, name -> null);
        assertEquals(List.of("off", "mem", "net"), asked);
        assertEquals(List.of("mem", "net"), opened.stream().map(TransportRouting.Opened::name).toList());
        assertEquals(List.of(MEMORY, NETWORK), opened.stream().map(TransportRouting.Opened::kind).toList());
    }

    @Test
    void eachPeersKindIsItsTransportsAndOnlyInProcessKindsMakeTheRoutingInProcess()
    {
        final Fake mem = new Fake("mem", (peer) -> true, true);
        final Fake net = new Fake("net", (peer) -> true, false);
        final TransportRouting routing = TransportRouting.connect(1,
            List.of(new TransportRouting.Opened("mem", MEMORY, mem), new TransportRouting.Opened("net", NETWORK, net)),
            this::endpoint, NODES.length, deadline());
        assertSame(MEMORY, routing.kindTo(0));
        assertSame(NETWORK, routing.kindTo(3));
        assertFalse(routing.inProcess());
        // Decided from the kind, whatever the class: a transport that says it is in-process is.
        assertTrue(TransportRouting.single(net, TransportKind.inProcess(), 2).inProcess());
        assertFalse(TransportRouting.single(net, NETWORK, 2).inProcess());
    }

    @Test
    void rangesAreWrittenCompactly()
    {
        assertEquals("[1-3, 5, 7-8]", TransportRouting.ranges(new TreeSet<>(List.of(1, 2, 3, 5, 7, 8))));
        assertEquals("[0]", TransportRouting.ranges(Set.of(0)));
        assertEquals("[]", TransportRouting.ranges(Set.of()));
    }

    private PeerEndpoint endpoint(final String transport, final int rank)
    {
        return new PeerEndpoint(rank, NODES[rank], address(transport, rank));
    }

    private static byte[] address(final String transport, final int rank)
    {
        return (transport + rank).getBytes(StandardCharsets.UTF_8);
    }

    private static long deadline()
    {
        return System.nanoTime() + 5_000_000_000L;
    }

    private static TransportProvider provider(
        final String name, final int preference, final List<String> asked, final Transport transport)
    {
        return new TransportProvider()
        {
            @Override
            public String name()
            {
                return name;
            }

            @Override
            public int preference()
            {
                return preference;
            }

            @Override
            public TransportKind kind()
            {
                return "mem".equals(name) ? MEMORY : NETWORK;
            }

            @Override
            public Transport open(final TransportContext context)
            {
                asked.add(name);
                return transport;
            }
        };
    }

    /** A transport that records what it is offered; {@code sameNodeOnly} as shared memory. */
    private static final class Fake implements Transport
    {
        final String name;
        final IntPredicate succeeds;
        final boolean sameNodeOnly;
        final List<Integer> offered = new ArrayList<>();
        final Link link = new Link()
        {
            @Override
            public int peer()
            {
                return -1;
            }

            @Override
            public void send(
                final long commId, final long seq, final long tag, final OpDescriptor desc, final ByteBuffer payload,
                final Request done)
            {
            }

            @Override
            public void abort(final long commId, final String reason)
            {
            }
        };
        boolean closed;

        Fake(final String name, final IntPredicate succeeds, final boolean sameNodeOnly)
        {
            this.name = name;
            this.succeeds = succeeds;
            this.sameNodeOnly = sameNodeOnly;
        }

        @Override
        public String name()
        {
            return name;
        }

        @Override
        public boolean canConnect(final PeerEndpoint self, final PeerEndpoint peer)
        {
            return !sameNodeOnly || self.nodeId().equals(peer.nodeId());
        }

        @Override
        public Set<Integer> connect(final PeerEndpoint self, final List<PeerEndpoint> peers, final long deadlineNanos)
        {
            final Set<Integer> connected = new TreeSet<>();
            for (final PeerEndpoint p : peers)
            {
                offered.add(p.rank());
                if (succeeds.test(p.rank()))
                {
                    connected.add(p.rank());
                }
            }
            return connected;
        }

        @Override
        public Link link(final int peer)
        {
            return link;
        }

        @Override
        public ProgressEngine progressEngine()
        {
            return null;
        }

        @Override
        public void close()
        {
            closed = true;
        }
    }

    @Test
    void aRoutingWithoutEnginesHasNone()
    {
        final Fake net = new Fake("net", p -> true, false);
        assertNull(TransportRouting.single(net, NETWORK, 2).progressEngine());
    }
}
