package dev.hccl.transport.netty;

import dev.hccl.api.CommConfig;
import dev.hccl.api.spi.Bootstrap;
import dev.hccl.api.spi.TransportContext;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The TCP transport's own settings: read like the library's, connections per pair = sockets x threads, and the
 * combinations that cannot work refused naming the variables.
 */
class TcpTransportProviderTest
{
    private static CommConfig config(final Map<String, String> env)
    {
        return CommConfig.builder().environment(env).conclude();
    }

    @Test
    void connectionsPerPairAreSocketsTimesThreads()
    {
        final TcpTransportProvider tcp = new TcpTransportProvider();
        assertEquals(1, TcpTransportProvider.connectionsPerPeer(config(Map.of())));
        final CommConfig c = config(Map.of("HCCL_SOCKET_NSOCKS", "2", "HCCL_SOCKET_NTHREADS", "4",
            "HCCL_IO_THREADS", "4"));
        tcp.check(c);
        assertEquals(8, TcpTransportProvider.connectionsPerPeer(c));
        assertEquals(4, c.get(TcpTransportProvider.IO_THREADS));
        assertEquals("4 (env HCCL_IO_THREADS)", c.describe().get("HCCL_IO_THREADS"));
        final CommConfig b = CommConfig.builder().environment(Map.of("HCCL_SOCKET_NSOCKS", "2"))
            .set(TcpTransportProvider.SOCKET_NSOCKS, 3).conclude();
        assertEquals(3, TcpTransportProvider.connectionsPerPeer(b), "the builder wins over the environment");
    }

    @Test
    void hcclChecksumReachesTheTransport()
    {
        final Bootstrap unused = new Bootstrap()
        {
            @Override
            public void put(final String key, final byte[] value)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public byte[] get(final String key, final long deadlineNanos)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public long add(final String key, final long delta)
            {
                throw new UnsupportedOperationException();
            }
        };
        for (final String value : new String[] { "0", "1" })
        {
            final CommConfig c = config(Map.of("HCCL_CHECKSUM", value));
            final NettyTransport t = (NettyTransport)new TcpTransportProvider().open(new TransportContext(0, 1, 1L,
                "token", "node", InetAddress.getLoopbackAddress(), c, new RecordingInbound(), unused));
            try
            {
                assertEquals("1".equals(value), t.checksum(), "HCCL_CHECKSUM=" + value);
            }
            finally
            {
                t.close();
            }
        }
    }

    @Test
    void combinationsThatCannotWorkAreRefusedNamingTheVariables()
    {
        final TcpTransportProvider tcp = new TcpTransportProvider();
        assertMessage("HCCL_SOCKET_NTHREADS=2 spreads each pair's connections over 2 I/O threads, but " +
            "HCCL_IO_THREADS=0; set HCCL_IO_THREADS to at least 2",
            () -> tcp.check(config(Map.of("HCCL_SOCKET_NTHREADS", "2"))));
        assertMessage("the TCP connections per pair, must be at most 16",
            () -> tcp.check(config(Map.of("HCCL_SOCKET_NSOCKS", "8", "HCCL_SOCKET_NTHREADS", "4",
                "HCCL_IO_THREADS", "4"))));
        assertMessage("HCCL_SOCKET_NSOCKS must be in [1, 16], got 0",
            () -> tcp.check(config(Map.of("HCCL_SOCKET_NSOCKS", "0"))));
        assertMessage("HCCL_IO_THREADS must be an integer, got 'many'",
            () -> tcp.check(config(Map.of("HCCL_IO_THREADS", "many"))));
    }

    private static void assertMessage(final String fragment, final org.junit.jupiter.api.function.Executable call)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, call);
        assertTrue(ex.getMessage().contains(fragment), ex.getMessage());
    }

    /** A transport bound without the provider (as the tests bind them) gets what an unset environment gives. */
    @Test
    void tcpSettingsDefaultsAreTheSettingsOwn()
    {
        final CommConfig unset = config(Map.of());
        final TcpSettings defaults = new TcpSettings();
        assertEquals(unset.maxFrameBytes(), defaults.maxFrameBytes());
        assertEquals(unset.get(TcpTransportProvider.IO_THREADS), defaults.ioThreads());
        assertEquals(TcpTransportProvider.connectionsPerPeer(unset), defaults.connectionsPerPeer());
        assertEquals(unset.get(TcpTransportProvider.SOCKET_NTHREADS), defaults.threadsPerPeer());
        assertEquals(unset.connectTimeout(), defaults.connectTimeout());
        assertEquals(unset.heartbeatTimeout(), defaults.heartbeatTimeout());
    }
}
