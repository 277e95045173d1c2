package dev.hccl.core.transport;

import dev.hccl.algorithms.CostParameters;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.spi.TransportKind;
import dev.hccl.api.spi.TransportProvider;
import org.junit.jupiter.api.Test;

import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StartingCostsTest
{
    /** The kinds of the library's transports (on the test class path at run time), most preferred first. */
    private static final List<TransportKind> LIBRARY = ServiceLoader.load(TransportProvider.class).stream()
        .map(ServiceLoader.Provider::get).sorted(Comparator.comparingInt(TransportProvider::preference).reversed())
        .map(TransportProvider::kind).toList();

    @Test
    void theLibrarysTransportsArePricedAsTheCostModelsDefaults()
    {
        assertEquals(List.of(TransportKind.Medium.SHARED_MEMORY, TransportKind.Medium.NETWORK),
            LIBRARY.stream().map(TransportKind::medium).toList());
        assertEquals(LinkCosts.SHARED_MEMORY_DEFAULTS, StartingCosts.of(LIBRARY));
        // Shared memory off on some rank: only the network transport is every rank's.
        assertEquals(LinkCosts.DEFAULTS, StartingCosts.of(LIBRARY.subList(1, 2)));
    }

    @Test
    void ranksAsThreadsAndNoTransportKeepTheDefaults()
    {
        assertSame(LinkCosts.DEFAULTS, StartingCosts.of(List.of(TransportKind.inProcess())));
        assertSame(LinkCosts.DEFAULTS, StartingCosts.of(List.of()));
    }

    @Test
    void aProviderThatDoesNotSayWhatItIsIsPricedAsBeforeTransportsSaid()
    {
        final TransportProvider older = new TransportProvider()
        {
            @Override
            public String name()
            {
                return "older";
            }

            @Override
            public int preference()
            {
                return 150;
            }

            @Override
            public Transport open(final TransportContext context)
            {
                throw new UnsupportedOperationException();
            }
        };
        assertEquals(TransportKind.undeclared(), older.kind());
        assertTrue(older.kind().crossesNodes());
        assertSame(LinkCosts.DEFAULTS, StartingCosts.of(List.of(older.kind())));
        assertEquals(LinkCosts.SHARED_MEMORY_DEFAULTS, StartingCosts.of(List.of(LIBRARY.get(0), older.kind(),
            LIBRARY.get(1))));
    }

    @Test
    void aThirdTransportIsPricedFromWhatItSays()
    {
        final TransportKind rdma = TransportKind.network(new TransportKind.LinkFigures(2e-6, 1 / 12e9),
            new TransportKind.LinkFigures(3e-6, 1 / 11e9));
        final double gamma = LinkCosts.DEFAULTS.local().gamma();
        assertEquals(new LinkCosts(new CostParameters(2e-6, 1 / 12e9, gamma), new CostParameters(3e-6, 1 / 11e9, gamma),
            "defaults"), StartingCosts.of(List.of(rdma, LIBRARY.get(1))));
        // Preferred for pairs of a node, shared memory gives the figures within nodes; the network ones stay.
        assertEquals(new LinkCosts(LinkCosts.SHARED_MEMORY_DEFAULTS.local(), new CostParameters(3e-6, 1 / 11e9, gamma),
            "defaults (shared memory within nodes)"), StartingCosts.of(List.of(LIBRARY.get(0), rdma, LIBRARY.get(1))));
    }
}
