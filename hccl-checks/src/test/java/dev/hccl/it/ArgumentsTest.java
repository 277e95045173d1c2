package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bad arguments fail on the calling thread with a message that names the argument, before anything is queued or
 * sent, and leave the communicator usable: after each bad call, a valid collective on every rank still succeeds.
 */
@Timeout(60)
class ArgumentsTest
{
    private List<Communicator> comms;
    private Communicator comm;

    @BeforeEach
    void open()
    {
        comms = Hccl.initAll(2, CommConfig.builder().environment(Map.of()).worldSize(2).conclude());
        comm = comms.get(0);
    }

    @AfterEach
    void close() throws Exception
    {
        Ranks.closeAll(comms);
    }

    private static ByteBuffer floats(final int count)
    {
        return ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
    }

    private void assertRejected(final String mustMention, final Executable call) throws Exception
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, call);
        assertTrue(ex.getMessage().contains(mustMention), () -> "'" + ex.getMessage() + "' should mention '" +
            mustMention + "'");
        assertCommunicatorStillWorks();
    }

    private void assertCommunicatorStillWorks() throws Exception
    {
        final List<float[]> results = Ranks.onEach(comms, 30, c ->
        {
            final float[] data = {c.rank() + 1, 10 * (c.rank() + 1)};
            c.allReduce(data, ReduceOp.SUM);
            return data;
        });
        for (final float[] r : results)
        {
            assertArrayEquals(new float[]{3, 30}, r);
        }
    }

    @Test
    void nullBuffersTypesAndOps() throws Exception
    {
        assertRejected("send", () -> comm.allReduce(null, floats(4), 4, DataType.FP32, ReduceOp.SUM));
        assertRejected("recv", () -> comm.allReduce(floats(4), null, 4, DataType.FP32, ReduceOp.SUM));
        assertRejected("type", () -> comm.allReduce(floats(4), floats(4), 4, null, ReduceOp.SUM));
        assertRejected("op", () -> comm.allReduce(floats(4), floats(4), 4, DataType.FP32, null));
        assertRejected("buf", () -> comm.broadcast(null, 4, DataType.FP32, 0));
        assertRejected("data", () -> comm.allReduce((float[])null, ReduceOp.SUM));
    }

    @Test
    void arrayLengthsThatDoNotFitTheWorldSizeNameCallRankLengthsAndTheFix() throws Exception
    {
        assertRejected("allGather(float[] send, float[] recv) on rank 0: recv.length is 5 and send.length 3, but " +
            "recv must hold send.length x 2 ranks = 6 elements: pass a recv of 6 elements",
            () -> comm.allGather(new float[3], new float[5]));
        assertRejected("allGather(int[] send, int[] recv) on rank 0: recv.length is 4 and send.length 3, but recv " +
            "must hold send.length x 2 ranks = 6 elements: pass a recv of 6 elements or a send of 2",
            () -> comm.allGather(new int[3], new int[4]));
        assertRejected("reduceScatter(long[] send, long[] recv, SUM) on rank 0: send.length is 5 and recv.length 2, " +
            "but send must hold recv.length x 2 ranks = 4 elements: pass a send of 4 elements",
            () -> comm.reduceScatter(new long[5], new long[2], ReduceOp.SUM));
        assertRejected("or a recv of 3", () -> comm.reduceScatter(new double[6], new double[6], ReduceOp.MAX));
        assertRejected("allGather(double[] send, double[] recv) on rank 0: send must not be null",
            () -> comm.allGather(null, new double[2]));
        assertRejected("reduceScatter(float[] send, float[] recv, SUM) on rank 0: recv must not be null",
            () -> comm.reduceScatter(new float[2], null, ReduceOp.SUM));
    }

    @Test
    void negativeCounts() throws Exception
    {
        assertRejected("count must not be negative", () -> comm.allReduce(floats(4), floats(4), -1, DataType.FP32,
            ReduceOp.SUM));
        assertRejected("sendCount", () -> comm.allGather(floats(4), floats(8), -2, DataType.FP32));
        assertRejected("recvCount", () -> comm.reduceScatter(floats(8), floats(4), -3, DataType.FP32, ReduceOp.MAX));
        assertRejected("countPerRank", () -> comm.allToAll(floats(8), floats(8), -4, DataType.FP32));
    }

    @Test
    void buffersTooSmallNameTheArgumentAndTheBytes() throws Exception
    {
        assertRejected("recv is too small: needs 400 bytes from its position, has 396",
            () -> comm.allReduce(floats(100), floats(99), 100, DataType.FP32, ReduceOp.SUM));
        assertRejected("recv is too small: needs 800 bytes",
            () -> comm.allGather(floats(100), floats(150), 100, DataType.FP32));
        assertRejected("send is too small: needs 800 bytes",
            () -> comm.reduceScatter(floats(150), floats(100), 100, DataType.FP32, ReduceOp.SUM));
        final ByteBuffer positioned = floats(100);
        positioned.position(8);
        assertRejected("position 8", () -> comm.broadcast(positioned, 100, DataType.FP32, 0));
        assertEquals(8, positioned.position(), "a rejected call must not move the position");
    }

    @Test
    void rootsAndPeersOutOfRange() throws Exception
    {
        assertRejected("root must be in [0, 2), got 2", () -> comm.broadcast(floats(4), 4, DataType.FP32, 2));
        assertRejected("root must be in [0, 2), got -1",
            () -> comm.reduce(floats(4), floats(4), 4, DataType.FP32, ReduceOp.SUM, -1));
        assertRejected("peer must be in [0, 2), got 5", () -> comm.send(floats(4), 4, DataType.FP32, 5));
        assertRejected("peer must be another rank", () -> comm.recv(floats(4), 4, DataType.FP32, 0));
    }

    @Test
    void readOnlyByteOrderAndAvgOnIntegers() throws Exception
    {
        assertRejected("read-only",
            () -> comm.allReduce(floats(4), floats(4).asReadOnlyBuffer(), 4, DataType.FP32, ReduceOp.SUM));
        assertRejected("byte order BIG_ENDIAN",
            () -> comm.allReduce(ByteBuffer.allocateDirect(16), floats(4), 4, DataType.FP32, ReduceOp.SUM));
        assertRejected("AVG needs a floating-point type",
            () -> comm.allReduce(floats(4), floats(4), 4, DataType.INT32, ReduceOp.AVG));
    }

    @Test
    void allGatherVArguments() throws Exception
    {
        // Rank 0 of 2: its block is recvCounts[0].
        final long[] counts = {2, 3};
        final long[] displs = {0, 2};
        assertRejected("recvCounts must not be null",
            () -> comm.allGatherV(floats(2), 2, floats(5), null, displs, DataType.FP32));
        assertRejected("recvCounts must have 2 entries, one per rank, got 3",
            () -> comm.allGatherV(floats(2), 2, floats(5), new long[]{2, 3, 0}, displs, DataType.FP32));
        assertRejected("recvCounts[1] must not be negative, got -3",
            () -> comm.allGatherV(floats(2), 2, floats(5), new long[]{2, -3}, displs, DataType.FP32));
        assertRejected("recvDispls[0] must not be negative, got -1",
            () -> comm.allGatherV(floats(2), 2, floats(5), counts, new long[]{-1, 2}, DataType.FP32));
        assertRejected("recvDispls must have 2 entries",
            () -> comm.allGatherV(floats(2), 2, floats(5), counts, new long[]{0}, DataType.FP32));
        assertRejected("sendCount 3 must equal recvCounts[0]",
            () -> comm.allGatherV(floats(3), 3, floats(5), counts, displs, DataType.FP32));
        assertRejected("sendCount must not be negative",
            () -> comm.allGatherV(floats(3), -2, floats(5), counts, displs, DataType.FP32));
        assertRejected("recv is too small for block 1 (recvDispls[1] + recvCounts[1] = 6 elements): needs 24 bytes",
            () -> comm.allGatherV(floats(2), 2, floats(5), counts, new long[]{0, 3}, DataType.FP32));
        assertRejected("recvDispls makes blocks overlap: block 0 is elements [0, 2), block 1 starts at 1",
            () -> comm.allGatherV(floats(2), 2, floats(5), counts, new long[]{0, 1}, DataType.FP32));
        assertRejected("send is too small", () -> comm.allGatherV(floats(1), 2, floats(5), counts, displs,
            DataType.FP32));
        assertRejected("recv is read-only", () -> comm.allGatherV(floats(2), 2, floats(5).asReadOnlyBuffer(), counts,
            displs, DataType.FP32));
        assertRejected("type", () -> comm.allGatherV(floats(2), 2, floats(5), counts, displs, null));
    }

    @Test
    void reduceScatterVArguments() throws Exception
    {
        final long[] counts = {2, 3};
        final long[] displs = {3, 0};
        assertRejected("sendCounts must not be null",
            () -> comm.reduceScatterV(floats(5), null, displs, floats(2), 2, DataType.FP32, ReduceOp.SUM));
        assertRejected("sendDispls must have 2 entries",
            () -> comm.reduceScatterV(floats(5), counts, new long[3], floats(2), 2, DataType.FP32, ReduceOp.SUM));
        assertRejected("recvCount 3 must equal sendCounts[0]",
            () -> comm.reduceScatterV(floats(5), counts, displs, floats(3), 3, DataType.FP32, ReduceOp.SUM));
        assertRejected("send is too small for block 0",
            () -> comm.reduceScatterV(floats(4), counts, displs, floats(2), 2, DataType.FP32, ReduceOp.SUM));
        assertRejected("recv is too small",
            () -> comm.reduceScatterV(floats(5), counts, displs, floats(1), 2, DataType.FP32, ReduceOp.SUM));
        assertRejected("AVG needs a floating-point type",
            () -> comm.reduceScatterV(floats(5), counts, displs, floats(2), 2, DataType.INT32, ReduceOp.AVG));
        assertRejected("op must not be null",
            () -> comm.reduceScatterV(floats(5), counts, displs, floats(2), 2, DataType.FP32, null));
    }

    @Test
    void allToAllVArguments() throws Exception
    {
        final long[] counts = {1, 2};
        final long[] displs = {0, 1};
        assertRejected("sendCounts[1] must not be negative",
            () -> comm.allToAllV(floats(3), new long[]{1, -2}, displs, floats(3), counts, displs, DataType.FP32));
        assertRejected("recvCounts must have 2 entries",
            () -> comm.allToAllV(floats(3), counts, displs, floats(3), new long[]{1}, displs, DataType.FP32));
        assertRejected("recvCounts[0] 2 must equal sendCounts[0]",
            () -> comm.allToAllV(floats(3), counts, displs, floats(3), new long[]{2, 2}, new long[]{0, 2},
                DataType.FP32));
        assertRejected("recvDispls makes blocks overlap",
            () -> comm.allToAllV(floats(3), counts, displs, floats(3), counts, new long[]{1, 0}, DataType.FP32));
        assertRejected("send is too small for block 1",
            () -> comm.allToAllV(floats(2), counts, displs, floats(3), counts, displs, DataType.FP32));
        assertRejected("recv is too small for block 1",
            () -> comm.allToAllV(floats(3), counts, displs, floats(3), counts, new long[]{0, 2}, DataType.FP32));
    }

    @Test
    void scatterAndGatherArguments() throws Exception
    {
        // Rank 0 is the root here: it must pass the whole buffer; elsewhere the root's buffer may be null.
        assertRejected("root must be in [0, 2), got 2", () -> comm.scatter(floats(8), floats(4), 4, DataType.FP32, 2));
        assertRejected("send must not be null", () -> comm.scatter(null, floats(4), 4, DataType.FP32, 0));
        assertRejected("send is too small: needs 32 bytes",
            () -> comm.scatter(floats(7), floats(4), 4, DataType.FP32, 0));
        assertRejected("recv is too small: needs 16 bytes",
            () -> comm.scatter(floats(8), floats(3), 4, DataType.FP32, 0));
        assertRejected("recvCount must not be negative",
            () -> comm.scatter(floats(8), floats(4), -4, DataType.FP32, 0));
        assertRejected("root must be in [0, 2), got -1", () -> comm.gather(floats(4), floats(8), 4, DataType.FP32, -1));
        assertRejected("recv must not be null", () -> comm.gather(floats(4), null, 4, DataType.FP32, 0));
        assertRejected("recv is too small: needs 32 bytes",
            () -> comm.gather(floats(4), floats(7), 4, DataType.FP32, 0));
        assertRejected("send is too small: needs 16 bytes",
            () -> comm.gather(floats(3), floats(8), 4, DataType.FP32, 0));
        assertRejected("sendCount must not be negative",
            () -> comm.gather(floats(4), floats(8), -1, DataType.FP32, 0));
    }

    @Test
    void scatterAndGatherIgnoreTheRootBufferElsewhere() throws Exception
    {
        final List<float[]> results = Ranks.onEach(comms, 30, c ->
        {
            final ByteBuffer all = c.rank() == 1 ? floats(4) : null;
            if (all != null)
            {
                all.asFloatBuffer().put(new float[]{1, 2, 3, 4});
            }
            final ByteBuffer mine = floats(2);
            c.scatter(all, mine, 2, DataType.FP32, 1);
            mine.putFloat(0, mine.getFloat(0) * 10);
            final ByteBuffer back = c.rank() == 1 ? floats(4) : null;
            c.gather(mine, back, 2, DataType.FP32, 1);
            final float[] out = new float[back == null ? 2 : 4];
            (back == null ? mine : back).asFloatBuffer().get(out);
            return out;
        });
        assertArrayEquals(new float[]{10, 2}, results.get(0));
        assertArrayEquals(new float[]{10, 2, 30, 4}, results.get(1));
    }

    @Test
    void closedCommunicatorRefusesNewOperations()
    {
        final List<Communicator> single = Hccl.initAll(1);
        final Communicator c = single.get(0);
        c.close();
        c.close(); // idempotent
        final IllegalStateException ex = assertThrows(IllegalStateException.class, c::barrier);
        assertTrue(ex.getMessage().contains("closed"), ex.getMessage());
    }

    @Test
    void callsNeverMoveBufferPositionOrLimit() throws Exception
    {
        final List<int[]> marks = Ranks.onEach(comms, 30, c ->
        {
            final ByteBuffer send = floats(10);
            final ByteBuffer recv = floats(12);
            send.position(4).limit(36);
            recv.position(8);
            c.allReduce(send, recv, 8, DataType.FP32, ReduceOp.SUM);
            return new int[]{send.position(), send.limit(), recv.position(), recv.limit()};
        });
        for (final int[] m : marks)
        {
            assertArrayEquals(new int[]{4, 36, 8, 48}, m);
        }
    }
}
