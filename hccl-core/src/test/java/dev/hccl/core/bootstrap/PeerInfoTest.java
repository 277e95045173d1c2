package dev.hccl.core.bootstrap;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class PeerInfoTest
{
    @Test
    void roundTripsEveryFieldAndEachTransportsOpaqueAddress()
    {
        final Map<String, byte[]> transports = new LinkedHashMap<>();
        transports.put("shm", new byte[]{0, 1, 2, (byte)0xff, '\n', '='});
        transports.put("tcp", new byte[]{10, 0, 0, 3, (byte)0xa0, 0x28});
        transports.put("empty", new byte[0]);
        final PeerInfo decoded = PeerInfo.decode(
            new PeerInfo("10.0.0.3", "node-a", "host-a", "eth0", 123_456, "0-3,8", transports).encode());
        assertEquals("10.0.0.3", decoded.host());
        assertEquals("node-a", decoded.nodeId());
        assertEquals("host-a", decoded.hostName());
        assertEquals("eth0", decoded.ifName());
        assertEquals(123_456, decoded.eagerBudget());
        assertEquals("0-3,8", decoded.cpus());
        assertArrayEquals(transports.get("shm"), decoded.address("shm"));
        assertArrayEquals(transports.get("tcp"), decoded.address("tcp"));
        assertArrayEquals(new byte[0], decoded.address("empty"));
        assertNull(decoded.address("ib"), "a transport the rank did not open has no address");
    }

    @Test
    void refusesMalformedRecords()
    {
        assertThrows(IllegalArgumentException.class,
            () -> PeerInfo.decode("10.0.0.3\nnode-a".getBytes(StandardCharsets.UTF_8)));
        assertThrows(IllegalArgumentException.class,
            () -> PeerInfo.decode("10.0.0.3\nnode-a\nhost-a\neth0\nmany".getBytes(StandardCharsets.UTF_8)));
        assertThrows(IllegalArgumentException.class,
            () -> PeerInfo.decode("10.0.0.3\nnode-a\nhost-a\neth0\n4096".getBytes(StandardCharsets.UTF_8)),
            "a record without the CPUs");
        assertThrows(IllegalArgumentException.class,
            () -> PeerInfo.decode(
                "10.0.0.3\nnode-a\nhost-a\neth0\n4096\n0-1\nno-equals-sign".getBytes(StandardCharsets.UTF_8)));
    }
}
