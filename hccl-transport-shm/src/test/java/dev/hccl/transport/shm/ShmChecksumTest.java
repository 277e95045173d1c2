package dev.hccl.transport.shm;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.testing.RecordingInbound;
import org.agrona.concurrent.AtomicBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code HCCL_CHECKSUM} over shared memory: messages of every size arrive whole with a CRC32C in each DATA record, and
 * a byte another process changes in the ring after the sender wrote it fails the link, naming the sender and the
 * setting, before the changed bytes reach the receiver's sink.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmChecksumTest
{
    private static final OpDescriptor ALL_REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 1024);

    private final ShmCluster cluster;
    private final RecordingInbound[] in = new RecordingInbound[2];

    ShmChecksumTest() throws IOException
    {
        cluster = new ShmCluster().checksum(true);
    }

    @AfterEach
    void tearDown() throws IOException
    {
        cluster.close();
    }

    /** Both ways at once, through rings the larger messages overflow, in chunks of every size up to the largest. */
    @ParameterizedTest
    @ValueSource(ints = { 1, 8, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, (1 << 20) + 3 })
    void messagesArriveWholeWithTheirChecksums(final int size) throws Exception
    {
        final ShmTransport[] t = cluster.connected(in);
        final byte[][] sent = { randomBytes(size, 1), randomBytes(size, 2) };
        final Future<?>[] ranks = new Future<?>[2];
        for (int r = 0; r < 2; r++)
        {
            final int me = r;
            ranks[r] = cluster.async(() ->
            {
                final Request req = ShmCluster.send(t[me], 1 - me, 7, 3, ALL_REDUCE, ByteBuffer.wrap(sent[me]));
                ShmCluster.drive(t[me], () -> req.isDone() && !in[me].messages.isEmpty());
                ShmCluster.assertOk(req);
                return null;
            });
        }
        for (final Future<?> f : ranks)
        {
            f.get(40, TimeUnit.SECONDS);
        }
        assertArrayEquals(sent[0], in[1].nextMessage().data());
        assertArrayEquals(sent[1], in[0].nextMessage().data());
        for (final RecordingInbound i : in)
        {
            assertTrue(i.failures.isEmpty() && i.errors.isEmpty(), () -> i.failures + " " + i.errors);
        }
    }

    @Test
    void aByteChangedInTheRingFailsTheLinkNamingTheSenderBeforeTheSinkReadsIt() throws Exception
    {
        final ShmTransport t0 = cluster.open(0, 2, in[0] = new RecordingInbound());
        final ShmTransport t1 = cluster.open(1, 2, in[1] = new RecordingInbound());
        cluster.connectAll(new ShmTransport[] {t0, t1});
        // Nothing reads rank 1's ring until this test drives it: the change below lands between write and read.
        t1.stopWatchForTest();

        final byte[] payload = randomBytes(4096, 3);
        final Request sent = ShmCluster.send(t0, 1, 42, 5, ALL_REDUCE, ByteBuffer.wrap(payload));
        ShmCluster.assertOk(sent); // the whole message fits in the ring at once

        // Another process of the job's user flips one bit of the payload in the ring.
        final AtomicBuffer ring = t0.peerForTest(1).outbound.buffer();
        final int at = indexOf(ring, payload) + 1000;
        ring.putByte(at, (byte)(ring.getByte(at) ^ 0x10));

        ShmCluster.drive(t1, () -> !in[1].failures.isEmpty());
        final RecordingInbound.Failure f = in[1].nextFailure();
        assertEquals(0, f.peer());
        final HcclException ex = assertInstanceOf(HcclException.class, f.cause());
        assertEquals(ErrorCode.E_SHM_SEGMENT, ex.errorCode(), ex.getMessage());
        assertEquals(0, ex.peer());
        assertEquals(Operation.ALL_REDUCE, ex.operation());
        assertEquals(42, ex.sequence());
        assertTrue(ex.getMessage().contains("HCCL_CHECKSUM") && ex.getMessage().contains("a message from rank 0") &&
            ex.getMessage().contains(cluster.dir.toString()), ex.getMessage());
        assertTrue(in[1].messages.isEmpty(), "the changed message was delivered");
        assertTrue(in[1].errors.isEmpty(), in[1].errors::toString);
    }

    /** Where {@code bytes} first occur in the ring's memory. */
    private static int indexOf(final AtomicBuffer ring, final byte[] bytes)
    {
        final byte[] memory = new byte[ring.capacity()];
        ring.getBytes(0, memory);
        outer:
        for (int i = 0; i + bytes.length <= memory.length; i++)
        {
            for (int j = 0; j < bytes.length; j++)
            {
                if (memory[i + j] != bytes[j])
                {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("the payload is not in the ring");
    }

    private static byte[] randomBytes(final int size, final long seed)
    {
        final byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }
}
