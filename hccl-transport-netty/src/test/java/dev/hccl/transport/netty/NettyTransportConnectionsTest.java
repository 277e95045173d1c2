package dev.hccl.transport.netty;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.JobKey;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Several TCP connections per pair of ranks (HCCL_SOCKET_NSOCKS x HCCL_SOCKET_NTHREADS): messages spread over all of
 * them and arrive whole, the peer's goodbye comes after everything it sent, one lost connection fails the pair once,
 * and ranks set up differently fail at once.
 */
class NettyTransportConnectionsTest
{
    private static final int CONNECTIONS = 4;
    private static final OpDescriptor DESC = new OpDescriptor(Operation.SEND, DataType.UINT8, null, 0, 1);

    private final Cluster cluster = new Cluster();

    @AfterEach
    void tearDown()
    {
        cluster.close();
    }

    private NettyTransport[] connected(final RecordingInbound[] in) throws Exception
    {
        return cluster.connected(in, c -> c.connectionsPerPeer(CONNECTIONS)
            .threadsPerPeer(Math.min(CONNECTIONS, Math.max(1, Cluster.IO_THREADS))));
    }

    @Test
    void largeMessagesSpreadOverEveryConnectionAndArriveWhole() throws Exception
    {
        final RecordingInbound[] in = new RecordingInbound[2];
        final NettyTransport[] t = connected(in);
        final int messages = 64;
        final List<Request> sends = new ArrayList<>();
        for (int i = 0; i < messages; i++)
        {
            sends.add(Cluster.send(t[1], 0, i, 0, DESC,
                ByteBuffer.wrap(NettyTransportMessagingTest.randomBytes(256 * 1024 + i, i))));
        }
        sends.forEach(Cluster::awaitOk);

        final Map<Long, byte[]> got = new HashMap<>();
        for (int i = 0; i < messages; i++)
        {
            final RecordingInbound.Message m = in[0].nextMessage();
            got.put(m.seq(), m.data());
        }
        for (int i = 0; i < messages; i++)
        {
            assertArrayEquals(NettyTransportMessagingTest.randomBytes(256 * 1024 + i, i), got.get((long)i), "seq " + i);
        }
        final TcpLink link = t[1].linkOrNull(0);
        assertEquals(CONNECTIONS, link.connectionCount());
        long total = 0;
        for (int k = 0; k < CONNECTIONS; k++)
        {
            final long carried = link.connection(k).messagesWritten();
            assertTrue(carried > 0, "connection " + k + " carried no message");
            total += carried;
        }
        // Every message went whole on exactly one connection (heartbeats, which idle connections get each second,
        // are no messages).
        assertEquals(messages, total);
        assertTrue(in[0].errors.isEmpty(), in[0].errors::toString);
        assertTrue(in[0].failures.isEmpty(), () -> in[0].failures.toString());
    }

    @Test
    void thePeersGoodbyeComesAfterEveryMessageItSent() throws Exception
    {
        final RecordingInbound[] in = new RecordingInbound[2];
        final NettyTransport[] t = connected(in);
        final int messages = 48;
        for (int i = 0; i < messages; i++)
        {
            // Sizes that differ a lot, so that connections finish at different times.
            final int size = 0 == i % 3 ? 1 << 20 : 1 + i;
            t[1].link(0).send(Cluster.COMM_ID, i, 0, DESC, ByteBuffer.wrap(new byte[size]), new Request(0, true, 0));
        }
        t[1].close(); // GOODBYE on every connection, behind the sends queued there

        assertEquals(1, in[0].peerClosed.poll(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
        final List<String> events = new ArrayList<>(in[0].events);
        assertEquals(messages + 1, events.size(), events::toString);
        assertEquals("closed 1", events.get(messages), events::toString);
        assertTrue(in[0].failures.isEmpty(), () -> in[0].failures.toString());
        assertTrue(in[0].errors.isEmpty(), in[0].errors::toString);
    }

    @Test
    void oneLostConnectionFailsThePairOnceAndClosesTheOthers() throws Exception
    {
        final RecordingInbound[] in = new RecordingInbound[2];
        final NettyTransport[] t = connected(in);
        t[1].linkOrNull(0).connection(2).channel().close(); // as a reset of that one connection would

        final RecordingInbound.Failure f = in[0].nextFailure();
        assertEquals(1, f.peer());
        final HcclException ex = assertInstanceOf(HcclException.class, f.cause());
        assertEquals(ErrorCode.E_TCP_TRANSFER, ex.errorCode());
        // Rank 1 closes its other connections as soon as it sees connection 2 go: rank 0 may notice any of them first.
        assertTrue(ex.getMessage().matches(".*connection [0-3] of 4 to rank 1 lost.*"), ex.getMessage());
        assertTrue(t[0].linkOrNull(1).terminated().await(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS),
            "the pair's other connections stayed open");
        assertTrue(t[1].linkOrNull(0).terminated().await(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
        assertNull(in[0].failures.poll(200, TimeUnit.MILLISECONDS), "reported more than once");

        final Request late = Cluster.send(t[0], 1, 1, 0, DESC, ByteBuffer.wrap(new byte[8]));
        assertTrue(late.await(System.nanoTime() + TimeUnit.SECONDS.toNanos(5)));
        assertEquals(ErrorCode.E_TCP_TRANSFER, assertInstanceOf(HcclException.class, late.failure()).errorCode());
    }

    @Test
    void ranksThatOpenDifferentNumbersOfConnectionsFailAtOnceNamingTheSetting() throws Exception
    {
        final Duration timeout = Duration.ofSeconds(20);
        final NettyTransport t0 = cluster.bind(Cluster.context(0, 2, new RecordingInbound())
            .connectionsPerPeer(2).threadsPerPeer(1).connectTimeout(timeout));
        final NettyTransport t1 = cluster.bind(Cluster.context(1, 2, new RecordingInbound())
            .connectionsPerPeer(3).threadsPerPeer(1).connectTimeout(timeout));
        final InetSocketAddress[] addresses = { t0.listenAddress(), t1.listenAddress() };
        final long start = System.nanoTime();
        final Future<?> connect0 = cluster.connectAsync(t0, addresses);
        final Future<?> connect1 = cluster.connectAsync(t1, addresses);
        for (final Future<?> f : List.of(connect0, connect1))
        {
            final HcclException ex = assertInstanceOf(HcclException.class, Cluster.failureOf(f));
            assertEquals(ErrorCode.E_TCP_CONNECT, ex.errorCode());
            assertTrue(ex.getMessage().contains("rank 1 opens 3 connections to each peer and rank 0 2"),
                ex.getMessage());
            assertTrue(ex.getMessage().contains("HCCL_SOCKET_NSOCKS x HCCL_SOCKET_NTHREADS"), ex.getMessage());
        }
        assertTrue(System.nanoTime() - start < timeout.toNanos() / 2, "waited for the timeout");
    }

    /**
     * A rank of the job that opens more connections than this one, while another connection of the same rank is
     * already up here, is refused with the reason, not closed without one: its connection index lies beyond this
     * side's connections, and looking it up among them must not fail.
     */
    @Test
    void aConnectionBeyondThisRanksConnectionsIsRefusedNamingTheSetting() throws Exception
    {
        final NettyTransport t0 = cluster.bind(Cluster.context(0, 2, new RecordingInbound())
            .connectionsPerPeer(2).threadsPerPeer(1));
        final Future<?> connect0 = cluster.connectAsync(t0, new InetSocketAddress[]{ t0.listenAddress(), null });
        try (Socket first = NettyTransportConnectTest.rawSocket(t0);
            Socket other = NettyTransportConnectTest.rawSocket(t0))
        {
            new RawDialer(first, Cluster.TOKEN, 1, 2, 0, 2, JobKey.nonce()).handshake(new byte[0]);
            final RawDialer otherSetUp = new RawDialer(other, Cluster.TOKEN, 1, 2, 3, 4, JobKey.nonce());
            otherSetUp.prove(new byte[0]);
            final RawDialer.Reply reply = otherSetUp.verdict();
            assertEquals(Handshake.STATUS_REJECT, reply.status(), reply.text());
            assertTrue(reply.text().contains("rank 1 opens 4 connections to each peer and rank 0 2"), reply.text());
            final HcclException ex = assertInstanceOf(HcclException.class, Cluster.failureOf(connect0));
            assertTrue(ex.getMessage().contains("rank 1 opens 4 connections to each peer"), ex.getMessage());
        }
    }

    @Test
    void settingsOutOfRangeAreRefusedNamingTheField()
    {
        final RecordingInbound in = new RecordingInbound();
        assertInvalid("connectionsPerPeer", Cluster.context(0, 1, in).connectionsPerPeer(0).threadsPerPeer(1));
        assertInvalid("connectionsPerPeer", Cluster.context(0, 1, in)
            .connectionsPerPeer(TcpSettings.CONNECTIONS_PER_PEER_MAX + 1).threadsPerPeer(1));
        assertInvalid("threadsPerPeer", Cluster.context(0, 1, in).connectionsPerPeer(2).threadsPerPeer(3));
        assertInvalid("threadsPerPeer", Cluster.context(0, 1, in).ioThreads(0).connectionsPerPeer(4).threadsPerPeer(2));
        assertInvalid("threadsPerPeer", Cluster.context(0, 1, in).ioThreads(1).connectionsPerPeer(4).threadsPerPeer(2));
    }

    private static void assertInvalid(final String field, final TcpSettings ctx)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, ctx::conclude);
        assertTrue(ex.getMessage().startsWith(field + ":"), ex.getMessage());
    }
}
