package dev.hccl.transport.netty;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Handshake, connection set-up and the acceptor's resistance to bad input.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NettyTransportConnectTest
{
    private final Cluster cluster = new Cluster();

    @AfterEach
    void tearDown()
    {
        cluster.close();
    }

    @Test
    void connectsOnlyThePeersChosenForTcpAndRefusesAPeerThatDialsAnyway() throws Exception
    {
        // Three ranks; the pair (0, 2) uses another transport (as two ranks of one node use shared memory).
        final RecordingInbound[] in = new RecordingInbound[3];
        final NettyTransport[] t = new NettyTransport[3];
        final InetSocketAddress[] addresses = new InetSocketAddress[3];
        for (int r = 0; r < 3; r++)
        {
            in[r] = new RecordingInbound();
            t[r] = cluster.bind(Cluster.context(r, 3, in[r]));
            addresses[r] = t[r].listenAddress();
        }
        final boolean[][] expected = { { false, true, false }, { true, false, true }, { false, true, false } };
        final Future<?> c0 = cluster.submit(() -> t[0].connect(addresses, expected[0]));
        final Future<?> c1 = cluster.submit(() -> t[1].connect(addresses, expected[1]));
        t[2].connect(addresses, expected[2]);
        assertNull(Cluster.failureOf(c0));
        assertNull(Cluster.failureOf(c1));
        assertThrows(IllegalStateException.class, () -> t[2].link(0), "no TCP link for a pair served elsewhere");
        assertThrows(IllegalStateException.class, () -> t[0].link(2));
        final OpDescriptor desc = new OpDescriptor(Operation.SEND, DataType.INT8, null, 0, 2);
        Cluster.awaitOk(Cluster.send(t[2], 1, 1, 1, desc, ByteBuffer.wrap(new byte[]{ 7, 8 })));
        assertArrayEquals(new byte[]{ 7, 8 }, in[1].nextMessage().data());

        // A rank 2 that wrongly dials rank 0 over TCP is refused, naming why.
        final RecordingInbound stray = new RecordingInbound();
        final NettyTransport wrong = cluster.bind(Cluster.context(2, 3, stray).connectTimeout(Duration.ofSeconds(2)));
        final HcclException ex = assertThrows(HcclException.class,
            () -> wrong.connect(addresses, new boolean[]{ true, false, false }));
        assertTrue(ex.getMessage().contains("reached over another transport"), ex.getMessage());
    }

    @Test
    void worldSizeOneConnectsAtOnceWithoutLinks()
    {
        final NettyTransport t = cluster.bind(Cluster.context(0, 1, new RecordingInbound()));
        assertNotEquals(0, t.listenAddress().getPort());
        assertTrue(t.name().startsWith("tcp"), t.name());
        final long start = System.nanoTime();
        t.connect(new InetSocketAddress[]{ t.listenAddress() });
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        assertThrows(IllegalArgumentException.class, () -> t.link(0));
        assertThrows(IllegalArgumentException.class, () -> t.link(1));
    }

    @Test
    void worldSizeTwoBuildsOneLinkEachWay() throws Exception
    {
        final RecordingInbound[] in = new RecordingInbound[2];
        final NettyTransport[] t = cluster.connected(in);
        assertEquals(1, t[0].link(1).peer());
        assertEquals(0, t[1].link(0).peer());
        assertThrows(IllegalArgumentException.class, () -> t[0].link(0));
        assertThrows(IllegalStateException.class, () -> t[0].connect(new InetSocketAddress[2]));
    }

    @Test
    void worldSizeFourConnectsEveryPairAndCarriesMessagesBothWays() throws Exception
    {
        final RecordingInbound[] in = new RecordingInbound[4];
        final NettyTransport[] t = cluster.connected(in);
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, -1, 8);
        for (int from = 0; from < 4; from++)
        {
            for (int to = 0; to < 4; to++)
            {
                if (from != to)
                {
                    final byte[] bytes = ("from " + from + " to " + to).getBytes(StandardCharsets.US_ASCII);
                    Cluster.awaitOk(Cluster.send(t[from], to, from, to, desc, ByteBuffer.wrap(bytes)));
                }
            }
        }
        for (int to = 0; to < 4; to++)
        {
            boolean[] seen = new boolean[4];
            for (int k = 0; k < 3; k++)
            {
                final RecordingInbound.Message m = in[to].nextMessage();
                assertEquals(m.seq(), m.from());
                assertEquals(to, m.tag());
                assertEquals("from " + m.from() + " to " + to, new String(m.data(), StandardCharsets.US_ASCII));
                assertTrue(m.thread().startsWith("hccl-io-" + to + "-"), m.thread());
                seen[m.from()] = true;
            }
            for (int from = 0; from < 4; from++)
            {
                assertEquals(from != to, seen[from], "rank " + to + " from " + from);
            }
            assertTrue(in[to].failures.isEmpty());
            assertTrue(in[to].errors.isEmpty(), in[to].errors::toString);
        }
    }

    @Test
    void wrongJobTokenIsRejectedAndTheAcceptorStillServesGoodPeers() throws Exception
    {
        final RecordingInbound in0 = new RecordingInbound();
        final NettyTransport t0 = cluster.bind(Cluster.context(0, 2, in0));
        final InetSocketAddress[] addresses = { t0.listenAddress(), null };
        final Future<?> connect0 = cluster.connectAsync(t0, addresses);

        final NettyTransport bad = cluster.bind(Cluster.context(1, 2, new RecordingInbound()).jobToken("wrong"));
        final HcclException ex = assertThrows(HcclException.class, () -> bad.connect(addresses));
        assertEquals(ErrorCode.E_TCP_CONNECT, ex.errorCode());
        assertEquals(Operation.INIT, ex.operation());
        assertEquals(0, ex.peer());
        assertTrue(ex.getMessage().contains("rank 0"), ex.getMessage());
        assertTrue(ex.getMessage().contains("job token mismatch"), ex.getMessage());
        bad.close();

        final RecordingInbound in1 = new RecordingInbound();
        final NettyTransport good = cluster.bind(Cluster.context(1, 2, in1));
        good.connect(addresses);
        assertNull(Cluster.failureOf(connect0));
        final OpDescriptor desc = new OpDescriptor(Operation.BARRIER, null, null, -1, 0);
        Cluster.awaitOk(Cluster.send(good, 0, 7, 0, desc, ByteBuffer.allocate(0)));
        assertEquals(7, in0.nextMessage().seq());
    }

    @Test
    void mismatchedCommunicatorAndWorldSizeAreRejectedWithTheReason() throws Exception
    {
        final NettyTransport t0 = cluster.bind(Cluster.context(0, 2, new RecordingInbound()));
        final InetSocketAddress[] two = { t0.listenAddress(), null };

        final NettyTransport otherComm = cluster.bind(Cluster.context(1, 2, new RecordingInbound()).commId(42));
        final HcclException e1 = assertThrows(HcclException.class, () -> otherComm.connect(two));
        assertTrue(e1.getMessage().contains("rejected: communicator id mismatch"), e1.getMessage());

        final NettyTransport otherSize = cluster.bind(Cluster.context(1, 3, new RecordingInbound()));
        final HcclException e2 =
            assertThrows(HcclException.class, () -> otherSize.connect(new InetSocketAddress[]{ two[0], null, null }));
        assertTrue(e2.getMessage().contains("rejected: world size mismatch"), e2.getMessage());
    }

    @Test
    void garbageBytesAreDroppedAndTheTransportKeepsServing() throws Exception
    {
        final RecordingInbound in0 = new RecordingInbound();
        final NettyTransport t0 = cluster.bind(Cluster.context(0, 2, in0));
        final Random random = new Random(1);

        // Wrong magic: closed without a reply.
        final byte[] garbage = new byte[4096];
        random.nextBytes(garbage);
        garbage[0] = 'X';
        try (Socket s = rawSocket(t0))
        {
            s.getOutputStream().write(garbage);
            s.getOutputStream().flush();
            assertClosedByPeer(s.getInputStream());
        }

        // Right magic and version, garbage after them and as the proof: authentication fails, REJECT with a reason,
        // then closed.
        final ByteBuffer hello = ByteBuffer.allocate(Handshake.HELLO_LENGTH);
        hello.putInt(Handshake.MAGIC).putShort(Handshake.VERSION);
        final byte[] rest = new byte[hello.remaining()];
        random.nextBytes(rest);
        hello.put(rest);
        try (Socket s = rawSocket(t0))
        {
            s.getOutputStream().write(hello.array());
            assertEquals(Handshake.STATUS_CHALLENGE, RawDialer.read(s).status());
            final byte[] proof = new byte[Handshake.PROOF_LENGTH];
            random.nextBytes(proof);
            s.getOutputStream().write(proof);
            final RawDialer.Reply reply = RawDialer.read(s);
            assertEquals(Handshake.STATUS_REJECT, reply.status());
            assertTrue(reply.text().contains("job token mismatch"), reply.text());
            assertClosedByPeer(s.getInputStream());
        }

        // A good peer still gets in.
        final RecordingInbound in1 = new RecordingInbound();
        final NettyTransport t1 = cluster.bind(Cluster.context(1, 2, in1));
        final InetSocketAddress[] addresses = { t0.listenAddress(), t1.listenAddress() };
        final Future<?> connect0 = cluster.connectAsync(t0, addresses);
        t1.connect(addresses);
        assertNull(Cluster.failureOf(connect0));
        final OpDescriptor desc = new OpDescriptor(Operation.SEND, DataType.INT8, null, 0, 3);
        Cluster.awaitOk(Cluster.send(t1, 0, 1, 2, desc, ByteBuffer.wrap(new byte[]{ 1, 2, 3 })));
        assertArrayEquals(new byte[]{ 1, 2, 3 }, in0.nextMessage().data());
        assertTrue(in0.failures.isEmpty());
    }

    @Test
    void aConnectionThatSendsNoHelloIsClosedAfterTheConnectTimeout() throws Exception
    {
        final NettyTransport t0 = cluster.bind(
            Cluster.context(0, 2, new RecordingInbound()).connectTimeout(Duration.ofMillis(300)));
        try (Socket s = rawSocket(t0))
        {
            s.getOutputStream().write(new byte[]{ 0x48, 0x43 }); // half a magic, then silence
            assertClosedByPeer(s.getInputStream());
        }
    }

    @Test
    void connectTimesOutListingARankThatNeverListens() throws Exception
    {
        final int deadPort;
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            deadPort = ss.getLocalPort();
        }
        final NettyTransport t1 = cluster.bind(
            Cluster.context(1, 2, new RecordingInbound()).connectTimeout(Duration.ofMillis(700)));
        final InetSocketAddress[] addresses =
            { new InetSocketAddress(InetAddress.getLoopbackAddress(), deadPort), t1.listenAddress() };
        final long start = System.nanoTime();
        final HcclException ex = assertThrows(HcclException.class, () -> t1.connect(addresses));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(650), "gave up before the timeout");
        assertEquals(ErrorCode.E_TCP_CONNECT, ex.errorCode());
        assertEquals(0, ex.peer());
        assertTrue(ex.getMessage().contains("rank 0 at"), ex.getMessage());
        assertTrue(ex.getMessage().contains("refused"), ex.getMessage());
        assertTrue(ex.getMessage().contains("could not connect to 1 of 1 peers"), ex.getMessage());
    }

    @Test
    void connectTimesOutListingAHigherRankThatNeverDials()
    {
        final NettyTransport t0 = cluster.bind(
            Cluster.context(0, 3, new RecordingInbound()).connectTimeout(Duration.ofMillis(500)));
        final HcclException ex = assertThrows(
            HcclException.class, () -> t0.connect(new InetSocketAddress[]{ t0.listenAddress(), null, null }));
        assertEquals(ErrorCode.E_TCP_CONNECT, ex.errorCode());
        assertEquals(1, ex.peer());
        assertTrue(ex.getMessage().contains("rank 1: timeout: no connection from rank 1"), ex.getMessage());
        assertTrue(ex.getMessage().contains("rank 2: timeout: no connection from rank 2"), ex.getMessage());
    }

    @Test
    void connectTimesOutWhenTheListenerNeverAnswersTheHandshake() throws Exception
    {
        try (ServerSocket mute = new ServerSocket(0, 10, InetAddress.getLoopbackAddress()))
        {
            final NettyTransport t1 = cluster.bind(
                Cluster.context(1, 2, new RecordingInbound()).connectTimeout(Duration.ofMillis(500)));
            final InetSocketAddress[] addresses =
                { new InetSocketAddress(InetAddress.getLoopbackAddress(), mute.getLocalPort()), t1.listenAddress() };
            final HcclException ex = assertThrows(HcclException.class, () -> t1.connect(addresses));
            assertTrue(ex.getMessage().contains("timeout: no handshake reply"), ex.getMessage());
        }
    }

    /**
     * An eavesdropper who recorded a good handshake cannot replay it: the acceptor's nonce is new in every connection,
     * so the recorded proof does not prove anything there, even with the same HELLO.
     */
    @Test
    void aRecordedHandshakeCannotBeReplayed() throws Exception
    {
        final RecordingInbound in0 = new RecordingInbound();
        final NettyTransport t0 = cluster.bind(Cluster.rawPeerContext(0, 3, in0));
        final RawDialer recorded;
        try (Socket s = rawSocket(t0))
        {
            recorded = new RawDialer(s, Cluster.TOKEN, 1, 3);
            recorded.handshake(new byte[0]);
        }
        try (Socket s = rawSocket(t0))
        {
            // The very HELLO and proof recorded; the replayer does not know the token.
            final RawDialer replay = new RawDialer(s, "a token the replayer does not know", 1, 3, recorded.nonce());
            replay.answer(recorded.sentProof());
            final RawDialer.Reply reply = replay.verdict();
            assertEquals(Handshake.STATUS_REJECT, reply.status());
            assertTrue(reply.text().contains("job token mismatch"), reply.text());
        }
    }

    @Test
    void aRankDialingTheWrongWayIsRejected() throws Exception
    {
        final NettyTransport t1 = cluster.bind(Cluster.context(1, 2, new RecordingInbound()));
        try (Socket s = rawSocket(t1))
        {
            // Rank 0 must never dial rank 1: lower ranks accept.
            final RawDialer dialer = new RawDialer(s, Cluster.TOKEN, 0, 2);
            dialer.prove(new byte[0]);
            final RawDialer.Reply reply = dialer.verdict();
            assertEquals(Handshake.STATUS_REJECT, reply.status());
            assertTrue(reply.text().contains("must not dial"), reply.text());
        }
    }

    @Test
    void closeIsIdempotentAndConnectAfterCloseFails() throws Exception
    {
        final RecordingInbound[] in = new RecordingInbound[2];
        final NettyTransport[] t = cluster.connected(in);
        t[0].close();
        t[0].close();
        final NettyTransport late = cluster.bind(Cluster.context(0, 2, new RecordingInbound()));
        late.close();
        final HcclException ex =
            assertThrows(HcclException.class, () -> late.connect(new InetSocketAddress[]{ null, null }));
        assertEquals(ErrorCode.E_TCP_CONNECT, ex.errorCode());
    }

    @Test
    void contextNamesTheInvalidField()
    {
        final RecordingInbound in = new RecordingInbound();
        assertInvalid("worldSize", new TcpSettings().rank(0).jobToken("t").inbound(in));
        assertInvalid("rank", new TcpSettings().rank(2).worldSize(2).jobToken("t").inbound(in));
        assertInvalid("jobToken", new TcpSettings().rank(0).worldSize(1).inbound(in));
        assertInvalid("inbound", new TcpSettings().rank(0).worldSize(1).jobToken("t"));
        assertInvalid("maxFrameBytes", Cluster.context(0, 1, in).maxFrameBytes(0));
        assertInvalid("ioThreads", Cluster.context(0, 1, in).ioThreads(-1));
        assertInvalid("ioThreads", Cluster.context(0, 1, in).ioThreads(TcpSettings.IO_THREADS_MAX + 1));
        assertInvalid("connectTimeout", Cluster.context(0, 1, in).connectTimeout(Duration.ZERO));
        assertInvalid("bindAddress", Cluster.context(0, 1, in).bindAddress(null));
        final TcpSettings ok = Cluster.context(0, 1, in);
        assertSame(ok, ok.conclude());
    }

    private static void assertInvalid(final String field, final TcpSettings ctx)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, ctx::conclude);
        assertTrue(ex.getMessage().startsWith(field + ":"), ex.getMessage());
    }

    static Socket rawSocket(final NettyTransport t) throws IOException
    {
        final Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.setSoTimeout(20_000);
        s.connect(t.listenAddress(), 5_000);
        return s;
    }

    /**
     * Reads until the peer closes: end of stream, or a reset (unread bytes on the closing side turn the close into a
     * reset). A read timeout means the connection was left open: a failure.
     */
    static void assertClosedByPeer(final InputStream in)
    {
        final byte[] buf = new byte[4096];
        try
        {
            while (in.read(buf) >= 0)
            {
                // drain whatever was sent before the close
            }
        }
        catch (final SocketTimeoutException ex)
        {
            fail("the connection was not closed", ex);
        }
        catch (final SocketException ex)
        {
            // Reset by the peer: closed as well.
        }
        catch (final IOException ex)
        {
            fail(ex);
        }
    }

    static void writeAll(final OutputStream out, final byte[] bytes) throws IOException
    {
        out.write(bytes);
        out.flush();
    }
}
