package dev.hccl.transport.shm;

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

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Messages both ways, streaming through rings smaller than the messages, order, ABORT, GOODBYE, closed and failed
 * links, between transports on real shared memory.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmTransportMessagingTest
{
    private static final OpDescriptor ALL_REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 1000);

    private final ShmCluster cluster;
    private final RecordingInbound[] in = new RecordingInbound[2];

    ShmTransportMessagingTest() throws IOException
    {
        cluster = new ShmCluster();
    }

    @AfterEach
    void tearDown() throws IOException
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

    /**
     * Both ranks send at once, each driven by its own thread: heap one way, direct the other, each from a position
     * past 0 to a limit short of the capacity, which the send leaves as they are.
     */
    @ParameterizedTest
    @ValueSource(ints = { 0, 1, 7, 8, 64 * 1024 - 1, 64 * 1024, (1 << 20) + 3, 10 << 20 })
    void messagesCrossBothWaysAtOnceByteForByte(final int size) throws Exception
    {
        final ShmTransport[] t = cluster.connected(in, ShmTransport.RING_BYTES_DEFAULT);
        final byte[] up = randomBytes(size, 1);
        final byte[] down = randomBytes(size, 2);
        final OpDescriptor desc = new OpDescriptor(Operation.BROADCAST, DataType.INT8, null, 1, size);
        final long tag = Tags.of(3, 17, 5);

        final byte[] heapArray = new byte[size + 16];
        System.arraycopy(up, 0, heapArray, 5, size);
        final byte[] heapBefore = heapArray.clone();
        final ByteBuffer heap = ByteBuffer.wrap(heapArray, 5, size);
        final ByteBuffer direct = ByteBuffer.allocateDirect(size + 16);
        direct.position(7);
        direct.put(down);
        direct.position(7).limit(7 + size);

        final Future<Request> fromZero = cluster.async(() ->
        {
            final Request r = ShmCluster.send(t[0], 1, 99, tag, desc, heap);
            ShmCluster.drive(t[0], () -> r.isDone() && !in[0].messages.isEmpty());
            return r;
        });
        final Future<Request> fromOne = cluster.async(() ->
        {
            final Request r = ShmCluster.send(t[1], 0, 100, tag, ALL_REDUCE, direct);
            ShmCluster.drive(t[1], () -> r.isDone() && !in[1].messages.isEmpty());
            return r;
        });
        ShmCluster.assertOk(fromZero.get(30, TimeUnit.SECONDS));
        ShmCluster.assertOk(fromOne.get(30, TimeUnit.SECONDS));

        assertEquals(5, heap.position());
        assertEquals(5 + size, heap.limit());
        assertArrayEquals(heapBefore, heapArray, "the heap payload was modified");
        assertEquals(7, direct.position());
        assertEquals(7 + size, direct.limit());

        final RecordingInbound.Message atOne = in[1].nextMessage();
        assertEquals(0, atOne.from());
        assertEquals(ShmCluster.COMM_ID, atOne.commId());
        assertEquals(99, atOne.seq());
        assertEquals(tag, atOne.tag());
        assertEquals(desc, atOne.desc());
        assertArrayEquals(up, atOne.data());
        assertChunks(size, atOne);

        final RecordingInbound.Message atZero = in[0].nextMessage();
        assertEquals(1, atZero.from());
        assertEquals(100, atZero.seq());
        assertEquals(ALL_REDUCE, atZero.desc());
        assertArrayEquals(down, atZero.data());
        assertChunks(size, atZero);
    }

    /** Chunks of at most 64 KiB, all but the last a multiple of 8, views of the shared (direct) memory. */
    private static void assertChunks(final int size, final RecordingInbound.Message m)
    {
        final List<Integer> chunks = m.chunks();
        long sum = 0;
        for (int i = 0; i < chunks.size(); i++)
        {
            final int c = chunks.get(i);
            assertTrue(c > 0 && c <= ShmRecords.DATA_CHUNK_MAX_BYTES, "chunk of " + c + " bytes");
            if (i < chunks.size() - 1)
            {
                assertEquals(0, c % 8, "chunk " + i + " of " + c + " bytes is not a multiple of 8");
            }
            sum += c;
        }
        assertEquals(size, sum);
        assertEquals((size + ShmRecords.DATA_CHUNK_MAX_BYTES - 1) / ShmRecords.DATA_CHUNK_MAX_BYTES, chunks.size(),
            "chunks: " + chunks);
        assertTrue(m.allDirect(), "a chunk was not a view of the shared memory");
    }

    @Test
    void descriptorsWithoutTypeOrReductionSurvive() throws Exception
    {
        final ShmTransport[] t = cluster.connected(in);
        final OpDescriptor barrier = new OpDescriptor(Operation.BARRIER, null, null, OpDescriptor.NO_ROOT, 0);
        final OpDescriptor reduce = new OpDescriptor(Operation.REDUCE, DataType.BF16, ReduceOp.AVG, 1, Long.MAX_VALUE);
        final Request r1 = ShmCluster.send(t[0], 1, -5, -1L, barrier, ByteBuffer.allocate(0));
        final Request r2 = ShmCluster.send(t[0], 1, Long.MAX_VALUE, Long.MIN_VALUE, reduce, ByteBuffer.allocate(2));
        ShmCluster.drive(t[1], () -> in[1].messages.size() == 2);
        ShmCluster.assertOk(r1);
        ShmCluster.assertOk(r2);
        final RecordingInbound.Message m1 = in[1].nextMessage();
        assertEquals(barrier, m1.desc());
        assertEquals(-5, m1.seq());
        assertEquals(-1L, m1.tag());
        assertEquals(0, m1.data().length);
        assertTrue(m1.chunks().isEmpty(), "a zero-length message is a header only");
        final RecordingInbound.Message m2 = in[1].nextMessage();
        assertEquals(reduce, m2.desc());
        assertEquals(Long.MIN_VALUE, m2.tag());
    }

    /** Thousands of messages of mixed sizes each way, through rings they overflow many times, keep their order. */
    @Test
    void manyMessagesInARowKeepTheirOrderBothWays() throws Exception
    {
        final ShmTransport[] t = cluster.connected(in);
        final int count = 3000;
        final List<Future<List<Request>>> senders = new ArrayList<>();
        for (int r = 0; r < 2; r++)
        {
            final int me = r;
            senders.add(cluster.async(() ->
            {
                final List<Request> requests = new ArrayList<>();
                for (int i = 0; i < count; i++)
                {
                    final ByteBuffer payload = (0 == i % 2 ? ByteBuffer.allocate(size(i)) :
                        ByteBuffer.allocateDirect(size(i))).put(randomBytes(size(i), me * 100_000L + i)).flip();
                    requests.add(ShmCluster.send(t[me], 1 - me, i, Tags.of(1, i, 0), ALL_REDUCE, payload));
                }
                ShmCluster.drive(t[me], () -> requests.get(count - 1).isDone() && in[me].messages.size() == count);
                return requests;
            }));
        }
        for (final Future<List<Request>> f : senders)
        {
            for (final Request r : f.get(40, TimeUnit.SECONDS))
            {
                ShmCluster.assertOk(r);
            }
        }
        for (int r = 0; r < 2; r++)
        {
            final int from = 1 - r;
            for (int i = 0; i < count; i++)
            {
                final RecordingInbound.Message m = in[r].nextMessage();
                assertEquals(i, m.seq(), "rank " + r + ": message out of order");
                assertEquals(Tags.of(1, i, 0), m.tag());
                assertArrayEquals(randomBytes(size(i), from * 100_000L + i), m.data(), "message " + i);
            }
        }
    }

    private static int size(final int i)
    {
        return 0 == i % 10 ? 70_000 + i : (i * 37) % 3000;
    }

    @Test
    void abortReachesThePeerWithItsReasonCutToFit() throws Exception
    {
        final ShmTransport[] t = cluster.connected(in);
        t[0].link(1).abort(77L, "rank 0 failed: boom");
        final String longReason = "x".repeat(10_000);
        t[0].link(1).abort(78L, longReason);
        ShmCluster.drive(t[1], () -> in[1].aborts.size() == 2);
        assertEquals("0/77: rank 0 failed: boom", in[1].aborts.poll());
        final String cut = in[1].aborts.poll();
        assertEquals("0/78: " + "x".repeat(ShmRecords.ABORT_REASON_MAX_BYTES), cut);
        assertTrue(in[1].failures.isEmpty(), "an ABORT failed the link");

        // The link still carries messages afterwards.
        final Request r = ShmCluster.send(t[0], 1, 1, 1, ALL_REDUCE, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        ShmCluster.drive(t[1], () -> !in[1].messages.isEmpty());
        ShmCluster.assertOk(r);
    }

    @Test
    void closeSaysGoodbyeAndThePeerCannotSendAnyMore() throws Exception
    {
        final ShmTransport[] t = cluster.connected(in);
        final Request before = ShmCluster.send(t[0], 1, 1, 1, ALL_REDUCE, ByteBuffer.allocate(100));
        t[0].close();
        ShmCluster.drive(t[1], () -> !in[1].peerClosed.isEmpty());
        assertEquals(List.of("msg 0 1", "closed 0"), new ArrayList<>(in[1].events));
        ShmCluster.assertOk(before);

        final Request after = ShmCluster.send(t[1], 0, 2, 1, ALL_REDUCE, ByteBuffer.allocate(100));
        assertTrue(after.isDone(), "a send to a closed peer must fail at once");
        final HcclException ex = assertInstanceOf(HcclException.class, after.failure());
        assertEquals(ErrorCode.E_REMOTE, ex.errorCode());
        assertTrue(ex.getMessage().contains("rank 0 has closed its side"), ex.getMessage());
        assertTrue(in[1].failures.isEmpty(), "a goodbye is not a failure");
    }

    @Test
    void aSendAfterCloseFailsAtOnce() throws Exception
    {
        final ShmTransport[] t = cluster.connected(in);
        t[0].close();
        t[0].close();
        final ByteBuffer payload = ByteBuffer.allocateDirect(64);
        final Request r = ShmCluster.send(t[0], 1, 1, 1, ALL_REDUCE, payload);
        assertTrue(r.isDone());
        assertNotNull(r.failure());
        assertTrue(r.failure().getMessage().contains("the link is closed"), r.failure().getMessage());
        assertEquals(0, payload.position());
        t[0].link(1).abort(1, "ignored after close");
        assertTrue(in[0].failures.isEmpty() && in[0].peerClosed.isEmpty(), "close reports nothing to its own side");
    }

    /**
     * A peer whose heartbeat stops (its watch stopped, as a hung process's would) fails the link, naming the peer;
     * a send that waited for ring space fails with it.
     */
    @Test
    void aStoppedHeartbeatFailsTheLink() throws Exception
    {
        final ShmTransport t0 = cluster.open(0, 2, in[0] = new RecordingInbound(), ShmCluster.TEST_RING_BYTES, 300);
        final ShmTransport t1 = cluster.open(1, 2, in[1] = new RecordingInbound());
        cluster.connectAll(new ShmTransport[] {t0, t1});
        t1.stopWatchForTest();

        // Nobody reads rank 1's ring now: a message bigger than the ring waits in rank 0's queue.
        final Request pending = ShmCluster.send(t0, 1, 1, 1, ALL_REDUCE, ByteBuffer.allocate(1 << 20));
        final long start = System.nanoTime();
        final RecordingInbound.Failure f = in[0].nextFailure();
        final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(1, f.peer());
        assertEquals(ErrorCode.E_REMOTE, ((HcclException)f.cause()).errorCode());
        assertTrue(((HcclException)f.cause()).detail().startsWith("rank 1 (pid " + ProcessHandle.current().pid() + ")"),
            ((HcclException)f.cause()).detail());
        assertTrue(((HcclException)f.cause()).detail().contains("heartbeat in shared memory is"), ((HcclException)f.cause()).detail());
        assertTrue(ms < 5_000, "noticed after " + ms + " ms");
        assertTrue(pending.isDone());
        assertNotNull(pending.failure(), "the waiting send did not fail");
        assertTrue(pending.failure().getMessage().contains("rank 1"), pending.failure().getMessage());
        Thread.sleep(300);
        assertEquals(1, in[0].events.stream().filter(e -> e.startsWith("failed")).count(), "reported more than once");
    }

    /** A peer whose process dies is noticed from its pid, well before its heartbeat would be old. */
    @Test
    void aPeerWhoseProcessDiesIsNoticedFromItsPid() throws Exception
    {
        final Process child = new ProcessBuilder("sleep", "60").start();
        try
        {
            final ShmTransport t0 = cluster.open(0, 2, in[0] = new RecordingInbound());
            final ShmTransport t1 = cluster.open(1, 2, in[1] = new RecordingInbound());
            // Rank 0 sees rank 1 as the child process: its pid dies while rank 1's heartbeat goes on.
            cluster.connectSeeingRankOneAs(t0, t1, child);
            Thread.sleep(300);
            assertTrue(in[0].failures.isEmpty(), "a live peer was reported: " + in[0].failures);

            child.destroyForcibly().waitFor();
            final long start = System.nanoTime();
            final RecordingInbound.Failure f = in[0].nextFailure();
            final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(1, f.peer());
            assertEquals("rank 1 (pid " + child.pid() + ") died", ((HcclException)f.cause()).detail());
            assertTrue(ms < 2_000, "noticed after " + ms + " ms");
        }
        finally
        {
            child.destroyForcibly();
        }
    }

    @Test
    void aThrowingSinkFailsTheLinkOnce() throws Exception
    {
        final ShmTransport[] t = cluster.connected(in);
        in[1].throwOnWrite = true;
        ShmCluster.send(t[0], 1, 1, 1, ALL_REDUCE, ByteBuffer.allocate(10));
        final RecordingInbound.Failure f = in[1].nextFailure();
        assertEquals(0, f.peer());
        assertTrue(((HcclException)f.cause()).detail().contains("threw"), ((HcclException)f.cause()).detail());
        final Request r = ShmCluster.send(t[1], 0, 2, 1, ALL_REDUCE, ByteBuffer.allocate(10));
        assertTrue(r.isDone() && null != r.failure(), "a send on a failed link must fail at once");
    }

    static byte[] randomBytes(final int size, final long seed)
    {
        final byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static String utf8(final byte[] b)
    {
        return new String(b, StandardCharsets.UTF_8);
    }
}
