package dev.hccl.core.bootstrap;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The peer record in the rendezvous store: the interface travels with it, and a record without one is still read.
 */
class PeerInfoTest
{
    @Test
    void roundTripsWithTheInterface()
    {
        final PeerInfo decoded = PeerInfo.decode(new PeerInfo("10.0.0.3", 41000, "node-a", "host-a", "eth0").encode());
        assertEquals("10.0.0.3", decoded.host());
        assertEquals(41000, decoded.port());
        assertEquals("node-a", decoded.nodeId());
        assertEquals("host-a", decoded.hostName());
        assertEquals("eth0", decoded.ifName());
    }

    @Test
    void readsTheFourFieldRecordWithoutAnInterface()
    {
        final PeerInfo decoded = PeerInfo.decode("10.0.0.3\n41000\nnode-a\nhost-a".getBytes(StandardCharsets.UTF_8));
        assertEquals("10.0.0.3", decoded.host());
        assertEquals("host-a", decoded.hostName());
        assertEquals("", decoded.ifName());
        assertEquals("", new PeerInfo("10.0.0.3", 41000, "node-a", "host-a").ifName());
    }

    @Test
    void refusesAMalformedRecord()
    {
        assertThrows(IllegalArgumentException.class,
            () -> PeerInfo.decode("10.0.0.3\n41000".getBytes(StandardCharsets.UTF_8)));
    }
}
