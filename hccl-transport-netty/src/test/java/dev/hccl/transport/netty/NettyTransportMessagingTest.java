package dev.hccl.transport.netty;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Messages, streaming, ordering, abort, orderly close and failures between connected transports.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NettyTransportMessagingTest
{
    private static final OpDescriptor ALL_REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 1000);

    private final Cluster cluster = new Cluster();
    private final RecordingInbound[] in = new RecordingInbound[2];

    @AfterEach
    void tearDown()
    {
        cluster.close();
        for (final RecordingInbound i : in)
        {
            if (null != i)
            {
                assertTrue(i.errors.isEmpty(), i.errors::toString);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(ints = { 0, 1, 100, 1024, 1025, (1 << 20) + 3 })
    void aMessageArrivesWithExactBytesAndHeader(final int size) throws Exception
    {
        final NettyTransport[] t = cluster.connected(in);
        final byte[] bytes = randomBytes(size, size);
        final OpDescriptor desc = new OpDescriptor(Operation.BROADCAST, DataType.INT8, null, 1, size);
        final long tag = Tags.of(3, 17, 5);

        // Direct payload that starts at a non-zero position and stops short of the capacity.
        final ByteBuffer direct = ByteBuffer.allocateDirect(size + 16);
        direct.position(7);
        direct.put(bytes);
        direct.position(7).limit(7 + size);
        final Request r = Cluster.send(t[1], 0, 99, tag, desc, direct);
        assertEquals(7, direct.position());
        assertEquals(7 + size, direct.limit());
        Cluster.awaitOk(r);

        final RecordingInbound.Message m = in[0].nextMessage();
        assertEquals(1, m.from());
        assertEquals(Cluster.COMM_ID, m.commId());
        assertEquals(99, m.seq());
        assertEquals(tag, m.tag());
        assertEquals(desc, m.desc());
        assertArrayEquals(bytes, m.data());

        // Heap payload, the other way.
        final ByteBuffer heap = ByteBuffer.wrap(bytes);
        Cluster.awaitOk(Cluster.send(t[0], 1, 100, tag, ALL_REDUCE, heap));
        assertEquals(0, heap.position());
        final RecordingInbound.Message back = in[1].nextMessage();
        assertEquals(ALL_REDUCE, back.desc());
        assertArrayEquals(bytes, back.data());
    }

    @Test
    void descriptorsWithoutTypeOrReductionSurviveTheWire() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in);
        final OpDescriptor barrier = new OpDescriptor(Operation.BARRIER, null, null, OpDescriptor.NO_ROOT, 0);
        final OpDescriptor reduce = new OpDescriptor(Operation.REDUCE, DataType.BF16, ReduceOp.AVG, 1, Long.MAX_VALUE);
        Cluster.awaitOk(Cluster.send(t[0], 1, -5, -1L, barrier, ByteBuffer.allocate(0)));
        Cluster.awaitOk(Cluster.send(t[0], 1, Long.MAX_VALUE, Long.MIN_VALUE, reduce, ByteBuffer.allocate(2)));
        // Over several connections (the suite's third run) the two may arrive in either order: match by seq.
        final RecordingInbound.Message first = in[1].nextMessage();
        final RecordingInbound.Message second = in[1].nextMessage();
        final RecordingInbound.Message m1 = -5 == first.seq() ? first : second;
        final RecordingInbound.Message m2 = -5 == first.seq() ? second : first;
        assertEquals(barrier, m1.desc());
        assertEquals(-5, m1.seq());
        assertEquals(-1L, m1.tag());
        assertEquals(reduce, m2.desc());
        assertEquals(Long.MAX_VALUE, m2.seq());
        assertEquals(Long.MIN_VALUE, m2.tag());
    }

    @Test
    void aLargeMessageIsStreamedToTheSinkInSeveralChunks() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in);
        final byte[] bytes = randomBytes(4 << 20, 4);
        final ByteBuffer payload = ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
        Cluster.awaitOk(Cluster.send(t[0], 1, 1, 1, ALL_REDUCE, payload));
        final RecordingInbound.Message m = in[1].nextMessage();
        assertArrayEquals(bytes, m.data());
        assertTrue(m.writes() > 1, "the payload arrived in a single write: it was accumulated, not streamed");
    }

    @Test
    void manySmallFramesBackToBackArriveInOrderBothWays() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in);
        final int n = 20_000;
        final Thread[] senders = new Thread[2];
        final List<Throwable> problems = new ArrayList<>();
        for (int r = 0; r < 2; r++)
        {
            final int from = r;
            senders[r] = new Thread(() ->
            {
                try
                {
                    final Request[] requests = new Request[n];
                    for (int i = 0; i < n; i++)
                    {
                        requests[i] = Cluster.send(t[from], 1 - from, i, from, ALL_REDUCE, ByteBuffer.wrap(pattern(i)));
                    }
                    for (final Request req : requests)
                    {
                        Cluster.awaitOk(req);
                    }
                }
                catch (final Throwable ex)
                {
                    synchronized (problems)
                    {
                        problems.add(ex);
                    }
                }
            }, "sender-" + r);
            senders[r].start();
        }
        for (int r = 0; r < 2; r++)
        {
            final boolean[] seen = new boolean[n];
            for (int i = 0; i < n; i++)
            {
                final RecordingInbound.Message m = in[r].nextMessage();
                if (1 == Cluster.CONNECTIONS)
                {
                    assertEquals(i, m.seq(), "out of order at rank " + r);
                }
                // With several connections per pair only the messages of one connection keep their order.
                assertTrue(!seen[(int)m.seq()], "seq " + m.seq() + " twice at rank " + r);
                seen[(int)m.seq()] = true;
                assertArrayEquals(pattern((int)m.seq()), m.data());
            }
        }
        for (final Thread s : senders)
        {
            s.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertTrue(problems.isEmpty(), problems::toString);
    }

    @Test
    void abortIsDeliveredAndTheLinkStaysUsable() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in);
        t[0].link(1).abort(42L, "rank 0 failed: boom");
        assertEquals("0/42: rank 0 failed: boom", in[1].aborts.poll(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
        Cluster.awaitOk(Cluster.send(t[0], 1, 3, 0, ALL_REDUCE, ByteBuffer.wrap(new byte[]{ 9 })));
        assertEquals(3, in[1].nextMessage().seq());
        assertTrue(in[1].failures.isEmpty());
    }

    @Test
    void closeSendsQueuedDataThenGoodbyeAndThePeerSeesNoFailure() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in);
        final byte[] big = randomBytes(1 << 20, 7);
        final int n = 8;
        for (int i = 0; i < n; i++)
        {
            // Not awaited: close() must flush them before its GOODBYE.
            Cluster.send(t[0], 1, i, 0, ALL_REDUCE, ByteBuffer.wrap(big));
        }
        t[0].close();

        assertEquals(0, in[1].peerClosed.poll(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
        final TcpLink link = t[1].linkOrNull(0);
        assertTrue(link.terminated().await(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
        final java.util.Set<String> expected = new java.util.HashSet<>();
        final java.util.Set<String> got = new java.util.HashSet<>();
        for (int i = 0; i < n; i++)
        {
            expected.add("msg 0 " + i);
            got.add(in[1].events.poll());
            assertArrayEquals(big, in[1].nextMessage().data());
        }
        // Every message before the goodbye; in send order on one connection, in any order over several.
        assertEquals(expected, got);
        assertEquals("closed 0", in[1].events.poll());
        assertTrue(in[1].failures.isEmpty(), () -> "unexpected failure: " + in[1].failures);
        assertTrue(in[0].failures.isEmpty(), () -> "unexpected failure at the closing side: " + in[0].failures);

        final Request r = Cluster.send(t[1], 0, 0, 0, ALL_REDUCE, ByteBuffer.allocate(1));
        assertTrue(r.isDone(), "a send to a closed peer must fail at once");
        assertInstanceOf(HcclException.class, r.failure());
        assertTrue(r.failure().getMessage().contains("rank 0 has closed its side"), r.failure().getMessage());
    }

    @Test
    void closingBothSidesAtOnceReportsNoFailure() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in);
        final CountDownLatch go = new CountDownLatch(1);
        final Thread other = new Thread(() ->
        {
            try
            {
                go.await();
                t[1].close();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        });
        other.start();
        go.countDown();
        t[0].close();
        other.join(TimeUnit.SECONDS.toMillis(30));
        assertTrue(in[0].failures.isEmpty(), () -> in[0].failures.toString());
        assertTrue(in[1].failures.isEmpty(), () -> in[1].failures.toString());
    }

    @Test
    void aPeerThatVanishesIsReportedOnceAndSendsToItFailAtOnce() throws Exception
    {
        final RecordingInbound[] three = new RecordingInbound[3];
        final NettyTransport[] t = cluster.connected(three);
        t[2].closeLinksAbruptly();

        for (int r = 0; r < 2; r++)
        {
            final RecordingInbound.Failure f = three[r].nextFailure();
            assertEquals(2, f.peer());
            final HcclException ex = assertInstanceOf(HcclException.class, f.cause());
            assertEquals(ErrorCode.E_TCP_TRANSFER, ex.errorCode());
            assertEquals(r, ex.rank());
            assertEquals(2, ex.peer());
            assertTrue(ex.getMessage().contains("to rank 2 lost"), ex.getMessage());
            assertTrue(t[r].linkOrNull(2).terminated().await(RecordingInbound.WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(three[r].failures.isEmpty(), "reported more than once");
            assertTrue(three[r].peerClosed.isEmpty());

            final Request req = Cluster.send(t[r], 2, 0, 0, ALL_REDUCE, ByteBuffer.allocate(8));
            assertTrue(req.isDone(), "a send on a failed link must fail at once");
            final HcclException sendEx = assertInstanceOf(HcclException.class, req.failure());
            assertEquals(ErrorCode.E_TCP_TRANSFER, sendEx.errorCode());
            assertEquals(2, sendEx.peer());
        }
        // The survivors still talk.
        Cluster.awaitOk(Cluster.send(t[0], 1, 5, 0, ALL_REDUCE, ByteBuffer.allocate(4)));
        assertEquals(5, three[1].nextMessage().seq());
        assertTrue(three[2].failures.isEmpty(), "links closed by this side must not be reported as failures here");
    }

    @Test
    void aSinkThatThrowsFailsTheLink() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in);
        in[1].throwOnWrite = true;
        Cluster.send(t[0], 1, 1, 0, ALL_REDUCE, ByteBuffer.allocate(100));
        final RecordingInbound.Failure f = in[1].nextFailure();
        assertEquals(0, f.peer());
        final HcclException ex = assertInstanceOf(HcclException.class, f.cause());
        assertEquals(ErrorCode.E_TCP_TRANSFER, ex.errorCode());
        assertInstanceOf(IllegalStateException.class, ex.getCause());
        // The sender sees the connection drop without goodbye.
        assertEquals(1, in[0].nextFailure().peer());
    }

    @Test
    void sendsLargerThanMaxFrameBytesFailAtOnceAndTheLinkStaysUsable() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in, ctx -> ctx.maxFrameBytes(16));
        final Request r = Cluster.send(t[1], 0, 0, 0, ALL_REDUCE, ByteBuffer.allocate(17));
        assertTrue(r.isDone());
        assertEquals(ErrorCode.E_PARA, assertInstanceOf(HcclException.class, r.failure()).errorCode());
        Cluster.awaitOk(Cluster.send(t[1], 0, 1, 0, ALL_REDUCE, ByteBuffer.allocate(16)));
        assertEquals(1, in[0].nextMessage().seq());
    }

    static byte[] randomBytes(final int size, final long seed)
    {
        final byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    static byte[] pattern(final int i)
    {
        final byte[] bytes = new byte[i % 53];
        for (int k = 0; k < bytes.length; k++)
        {
            bytes[k] = (byte)(i * 31 + k);
        }
        return bytes;
    }
}
