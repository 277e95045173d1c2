package dev.hccl.transport.shm;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.testing.RecordingInbound;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A damaged segment is reported as such, with {@link ErrorCode#E_SHM_SEGMENT} naming the peer, the file and what is
 * wrong: a trailer holding values that neither rank can have written is not a frozen peer (nor, in the future, a
 * live one), and memory that faults because the file was truncated under the mapping is not a transfer error.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmDamageTest
{
    private static final OpDescriptor ALL_REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 16);
    private static final int RING_BYTES = ShmSegment.RING_BYTES_MIN;

    private final ShmCluster cluster;
    private final RecordingInbound[] in = new RecordingInbound[2];
    private final List<ShmSegment> segments = new ArrayList<>();

    ShmDamageTest() throws IOException
    {
        cluster = new ShmCluster();
    }

    @AfterEach
    void tearDown() throws IOException
    {
        segments.forEach(ShmSegment::unmap);
        cluster.close();
    }

    /**
     * Connects two ranks and stops rank 1's watch, so that nothing of rank 1 rewrites its heartbeat or reads its ring
     * (a live peer would overwrite a bad heartbeat within a beat); rank 0 still watches.
     *
     * @return rank 0's view of rank 1.
     */
    private ShmPeer rankZerosViewOfAQuietRankOne() throws Exception
    {
        final ShmTransport t0 = cluster.open(0, 2, in[0] = new RecordingInbound());
        final ShmTransport t1 = cluster.open(1, 2, in[1] = new RecordingInbound());
        cluster.connectAll(new ShmTransport[] {t0, t1});
        t1.stopWatchForTest();
        return t0.peerForTest(1);
    }

    private static HcclException damage(final RecordingInbound.Failure f, final int peer)
    {
        assertEquals(peer, f.peer());
        final HcclException ex = assertInstanceOf(HcclException.class, f.cause());
        assertEquals(ErrorCode.E_SHM_SEGMENT, ex.errorCode(), ex.getMessage());
        return ex;
    }

    private void assertCorrupted(final ShmPeer p, final String field) throws InterruptedException
    {
        final HcclException ex = damage(in[0].nextFailure(), 1);
        assertTrue(ex.detail().startsWith("the shared memory with rank 1 is corrupted: the trailer of the ring " +
            "rank 0 writes to rank 1 (byte " + p.segment.trailerOffset(true) + " of " + p.segment.file() + ") holds " +
            field), ex.detail());
        assertTrue(p.segment.file().startsWith(cluster.dir), p.segment.file().toString());
        assertFalse(ex.detail().contains("frozen"), ex.detail());
    }

    @Test
    void aHeartbeatThatCannotBeATimeIsACorruptedSegmentNotAFrozenPeer() throws Exception
    {
        final ShmPeer p = rankZerosViewOfAQuietRankOne();
        p.outbound.consumerHeartbeatTime(-1);
        assertCorrupted(p, "a consumer heartbeat of -1");
    }

    @Test
    void aHeartbeatFromTheFutureIsACorruptedSegmentNotALivePeer() throws Exception
    {
        // Such a heartbeat would never grow old: a peer that froze afterwards would never be noticed.
        final ShmPeer p = rankZerosViewOfAQuietRankOne();
        p.outbound.consumerHeartbeatTime(Long.MAX_VALUE);
        assertCorrupted(p, "a consumer heartbeat of " + Long.MAX_VALUE);
    }

    @Test
    void aHeadPastTheTailIsACorruptedSegment() throws Exception
    {
        final ShmPeer p = rankZerosViewOfAQuietRankOne();
        p.outbound.buffer().putLongVolatile(p.outbound.capacity() + RingBufferDescriptor.HEAD_POSITION_OFFSET, 1 << 20);
        assertCorrupted(p, "a head position of " + (1 << 20) + " past the tail position 0");
    }

    /** A pair whose file was truncated to nothing after both mapped it: rank 0's view, then rank 1's. */
    private ShmPeer[] truncatedPair() throws IOException
    {
        final Path file = cluster.dir.resolve("truncated");
        final ShmSegment lo = ShmSegment.create(file, RING_BYTES);
        segments.add(lo);
        final ShmSegment hi = ShmSegment.open(file, RING_BYTES);
        segments.add(hi);
        final ShmAddress self = ShmAddress.ofThisProcess(cluster.dir);
        final ShmPeer[] pair = {
            new ShmPeer(0, 1, lo, self, in[0] = new RecordingInbound(), false, () -> null),
            new ShmPeer(1, 0, hi, self, in[1] = new RecordingInbound(), false, () -> null)};
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE))
        {
            c.truncate(0);
        }
        Files.delete(file);
        return pair;
    }

    @Test
    void aTruncatedFileIsToldFromItsSizeAndFailsTheLinkBeforeTheHeartbeatTouchesTheMemory() throws Exception
    {
        final ShmPeer[] pair = truncatedPair();
        assertEquals("holds 0 bytes where its layout needs " + ShmSegment.fileBytes(RING_BYTES),
            pair[0].segment.truncation());
        ShmWatch.beat(pair);
        for (int r = 0; r < 2; r++)
        {
            final int peer = 1 - r;
            assertFalse(pair[r].link.isOpen());
            assertEquals(1, pair[r].settle(in[r]));
            final HcclException ex = damage(in[r].nextFailure(), peer);
            assertEquals("the shared memory with rank " + peer + " is truncated, found while writing this rank's " +
                "heartbeat for rank " + peer + ": its file " + cluster.dir.resolve("truncated") + " holds 0 bytes " +
                "where its layout needs " + ShmSegment.fileBytes(RING_BYTES) + ", so its memory faults (SIGBUS). " +
                "Another process shrank it after it was mapped: stop whatever cleans or truncates files in " +
                cluster.dir + " (HCCL_SHM_DIR) while jobs run", ex.detail());
            // A send on the failed link fails at once, with the same code.
            final Request r1 = new Request(peer, true, 1);
            pair[r].link.send(ShmCluster.COMM_ID, 1, 1, ALL_REDUCE, ByteBuffer.allocate(64), r1);
            assertEquals(ErrorCode.E_SHM_SEGMENT, assertInstanceOf(HcclException.class, r1.failure()).errorCode());
        }
    }

    @Test
    void aWholeFileIsNotTruncated() throws Exception
    {
        final ShmSegment s = ShmSegment.create(cluster.dir.resolve("whole"), RING_BYTES);
        segments.add(s);
        assertNull(s.truncation());
    }
}
