package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sub-communicators and asynchronous operations: ranks split by colour and ordered by key run their own collectives
 * beside the parent's; many asynchronous operations issued at once complete in issue order with the right results.
 */
@Timeout(120)
class SplitAndAsyncTest
{
    @Test
    void splitGroupsByColourOrdersByKeyAndRunsCollectives() throws Exception
    {
        final int n = 6;
        final List<Communicator> comms = Hccl.initAll(n, CommConfig.builder().environment(Map.of()).worldSize(n)
            .conclude());
        try
        {
            final List<int[]> results = Ranks.onEach(comms, 60, comm ->
            {
                final int r = comm.rank();
                // Colour: even or odd rank; key: reversed rank, so the sub-communicator reverses the order.
                try (Communicator sub = comm.split(r % 2, -r))
                {
                    final int[] sum = {r};
                    sub.allReduce(sum, ReduceOp.SUM);
                    final int[] rootValue = {sub.rank() == 0 ? 1000 + r : -1};
                    sub.broadcast(rootValue, 0);
                    comm.barrier(); // the parent still works beside its child
                    return new int[]{sub.rank(), sub.worldSize(), sum[0], rootValue[0]};
                }
            });
            for (int r = 0; r < n; r++)
            {
                final int[] got = results.get(r);
                final int expectedSubRank = (n - 1 - r) / 2; // evens: 4,2,0 -> 0,1,2; odds: 5,3,1 -> 0,1,2
                final int expectedSum = r % 2 == 0 ? 0 + 2 + 4 : 1 + 3 + 5;
                final int expectedRoot = 1000 + (r % 2 == 0 ? 4 : 5);
                assertArrayEquals(new int[]{expectedSubRank, 3, expectedSum, expectedRoot}, got, "rank " + r);
            }
            final List<Object> none = Ranks.onEach(comms, 60, comm ->
            {
                final Communicator sub = comm.split(comm.rank() == 0 ? -1 : 0, 0);
                if (sub == null)
                {
                    return "null";
                }
                final int size = sub.worldSize();
                sub.close();
                return size;
            });
            assertEquals("null", none.get(0), "a negative colour joins no communicator");
            assertEquals(n - 1, none.get(1));
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void aFailedSubCommunicatorLeavesItsSiblingAndParentWorking() throws Exception
    {
        final int n = 4;
        final List<Communicator> comms = Hccl.initAll(n, CommConfig.builder().environment(Map.of()).worldSize(n)
            .conclude());
        try
        {
            final List<String> outcomes = Ranks.onEach(comms, 60, comm ->
            {
                final int r = comm.rank();
                try (Communicator sub = comm.split(r / 2, r))
                {
                    String outcome = "ok";
                    if (r >= 2)
                    {
                        // Ranks 2 and 3 disagree on the count: their communicator fails, and only theirs.
                        final int[] data = new int[r == 2 ? 3 : 4];
                        try
                        {
                            sub.allReduce(data, ReduceOp.SUM);
                            outcome = "no error";
                        }
                        catch (final dev.hccl.api.HcclException ex)
                        {
                            outcome = ex.errorCode().name();
                        }
                    }
                    else
                    {
                        final int[] data = {r + 1};
                        sub.allReduce(data, ReduceOp.SUM);
                        outcome = data[0] == 3 ? "ok" : "wrong " + data[0];
                    }
                    final int[] all = {1};
                    comm.allReduce(all, ReduceOp.SUM); // the parent is untouched
                    return outcome + (all[0] == n ? "" : " parent wrong " + all[0]);
                }
            });
            assertEquals("ok", outcomes.get(0));
            assertEquals("ok", outcomes.get(1));
            for (final String o : outcomes.subList(2, 4))
            {
                assertTrue(o.equals("E_MISMATCH") || o.equals("E_REMOTE"), o);
            }
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void allToAllFromAReadOnlyViewOfTheReceiveBufferIsStaged() throws Exception
    {
        final int n = 3;
        final List<Communicator> comms = Hccl.initAll(n, CommConfig.builder().environment(Map.of()).worldSize(n)
            .conclude());
        try
        {
            final List<int[]> results = Ranks.onEach(comms, 60, comm ->
            {
                final ByteBuffer buf = ByteBuffer.allocate(4 * n * 100).order(ByteOrder.nativeOrder());
                for (int i = 0; i < n * 100; i++)
                {
                    buf.putInt(4 * i, comm.rank() * 1000 + i);
                }
                // The same memory, seen read-only: hasArray() is false, but it still overlaps recv.
                comm.allToAll(buf.asReadOnlyBuffer().order(ByteOrder.nativeOrder()), buf, 100, DataType.INT32);
                final int[] got = new int[n * 100];
                buf.asIntBuffer().get(got);
                return got;
            });
            for (int r = 0; r < n; r++)
            {
                for (int j = 0; j < n; j++)
                {
                    for (int i = 0; i < 100; i++)
                    {
                        assertEquals(j * 1000 + r * 100 + i, results.get(r)[j * 100 + i], "rank " + r);
                    }
                }
            }
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void asyncOperationsCompleteInIssueOrderWithTheRightResults() throws Exception
    {
        final int n = 4;
        final int ops = 50;
        final List<Communicator> comms = Hccl.initAll(n, CommConfig.builder().environment(Map.of()).worldSize(n)
            .conclude());
        try
        {
            final List<long[]> results = Ranks.onEach(comms, 60, comm ->
            {
                final List<ByteBuffer> buffers = new ArrayList<>();
                final List<CommFuture> futures = new ArrayList<>();
                for (int i = 0; i < ops; i++)
                {
                    final ByteBuffer b = ByteBuffer.allocateDirect(8 * 1000).order(ByteOrder.nativeOrder());
                    for (int j = 0; j < 1000; j++)
                    {
                        b.putLong(8 * j, (long)i * (comm.rank() + 1));
                    }
                    buffers.add(b);
                    futures.add(comm.allReduceAsync(b, b, 1000, DataType.INT64, ReduceOp.SUM));
                }
                final long[] firstElements = new long[ops];
                for (int i = ops - 1; i >= 0; i--) // join out of order: completion order is still issue order
                {
                    futures.get(i).join();
                    firstElements[i] = buffers.get(i).getLong(8 * 999);
                }
                return firstElements;
            });
            for (final long[] got : results)
            {
                for (int i = 0; i < ops; i++)
                {
                    assertEquals((long)i * n * (n + 1) / 2, got[i], "operation " + i);
                }
            }
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }
}
