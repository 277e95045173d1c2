package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Point-to-point patterns as MPI programs write them: every rank posts its receives, then its sends, then waits for
 * all. Issued asynchronously, they must make progress together, over TCP (ranks as threads) and the in-JVM transport.
 * And a receive that sees a mismatched message fails at once instead of waiting for {@code HCCL_EXEC_TIMEOUT}.
 */
@Timeout(300)
class PointToPointTest
{
    /** Long enough that a test passing by timing out cannot pass: every wait below is asserted far shorter. */
    private static final Duration EXEC_TIMEOUT = Duration.ofSeconds(60);
    private static final double PROMPT_SECONDS = 20;
    /** Over one segment (512 KiB by default): the transfers of one operation are in flight together too. */
    private static final int LARGE = 300_000;

    static Stream<Arguments> layouts()
    {
        final List<Arguments> cases = new ArrayList<>();
        for (final boolean tcp : new boolean[]{true, false})
        {
            for (final int n : tcp ? new int[]{2, 3, 5} : new int[]{2, 3, 4, 6})
            {
                cases.add(Arguments.of(tcp, n));
            }
        }
        return cases.stream();
    }

    private static List<Communicator> open(final boolean tcp, final int n) throws Exception
    {
        if (!tcp)
        {
            return Hccl.initAll(n, CommConfig.builder().environment(Map.of()).execTimeout(EXEC_TIMEOUT).conclude());
        }
        final int port = TcpConformanceTest.freePort();
        return Ranks.run(n, 120, rank -> Hccl.init(tcp(rank, n, port).conclude()));
    }

    /** Runs {@code task} on every rank of a fresh communicator, then closes them all. */
    private static void onEach(final boolean tcp, final int n, final java.util.function.Function<Communicator, Object> task)
        throws Exception
    {
        final List<Communicator> comms = open(tcp, n);
        try
        {
            Ranks.onEach(comms, 120, task);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    private static CommConfigBuilder tcp(final int rank, final int n, final int port)
    {
        return CommConfig.builder().environment(Map.of()).rank(rank).worldSize(n).masterAddr("127.0.0.1")
            .masterPort(port).connectTimeout(Duration.ofSeconds(30)).execTimeout(EXEC_TIMEOUT);
    }

    private static ByteBuffer floats(final int count)
    {
        return ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
    }

    /** A block whose every element says who sent it to whom. */
    private static ByteBuffer block(final int count, final int from, final int to)
    {
        final ByteBuffer b = floats(count);
        for (int i = 0; i < count; i++)
        {
            b.putFloat(i * 4, value(from, to, i));
        }
        return b;
    }

    private static float value(final int from, final int to, final int i)
    {
        return from * 1000 + to + (i % 97) * 1e-3f;
    }

    private static void assertBlock(final ByteBuffer b, final int count, final int from, final int to)
    {
        for (int i = 0; i < count; i++)
        {
            if (b.getFloat(i * 4) != value(from, to, i))
            {
                throw new AssertionError("element " + i + " from rank " + from + " to rank " + to + " is " +
                    b.getFloat(i * 4) + ", expected " + value(from, to, i));
            }
        }
    }

    private static void joinAll(final List<CommFuture> pending)
    {
        for (final CommFuture f : pending)
        {
            f.join();
        }
    }

    @ParameterizedTest(name = "tcp={0} n={1}")
    @MethodSource("layouts")
    void ringOfReceivesPostedBeforeSends(final boolean tcp, final int n) throws Exception
    {
        onEach(tcp, n, comm ->
        {
            final int r = comm.rank();
            final int left = (r + n - 1) % n;
            final int right = (r + 1) % n;
            for (final int count : new int[]{1, 1000, LARGE})
            {
                final ByteBuffer in = floats(count);
                final List<CommFuture> pending = new ArrayList<>();
                pending.add(comm.recvAsync(in, count, DataType.FP32, left));
                pending.add(comm.sendAsync(block(count, r, right), count, DataType.FP32, right));
                joinAll(pending);
                assertBlock(in, count, left, r);
            }
            return null;
        });
    }

    @ParameterizedTest(name = "tcp={0} n={1}")
    @MethodSource("layouts")
    void pairwiseExchangeWithEveryPeer(final boolean tcp, final int n) throws Exception
    {
        onEach(tcp, n, comm ->
        {
            final int r = comm.rank();
            final int count = 20_000;
            final ByteBuffer[] in = new ByteBuffer[n];
            final List<CommFuture> pending = new ArrayList<>();
            for (int p = 0; p < n; p++)
            {
                if (p != r)
                {
                    in[p] = floats(count);
                    pending.add(comm.recvAsync(in[p], count, DataType.FP32, p));
                }
            }
            for (int p = 0; p < n; p++)
            {
                if (p != r)
                {
                    pending.add(comm.sendAsync(block(count, r, p), count, DataType.FP32, p));
                }
            }
            joinAll(pending);
            for (int p = 0; p < n; p++)
            {
                if (p != r)
                {
                    assertBlock(in[p], count, p, r);
                }
            }
            return null;
        });
    }

    @ParameterizedTest(name = "tcp={0} n={1}")
    @MethodSource("layouts")
    void haloExchangeOnALine(final boolean tcp, final int n) throws Exception
    {
        // A 1-D domain split over the ranks, not periodic: the end ranks have one neighbour. Several time steps, as
        // a stencil code runs them, each exchanging both halos.
        onEach(tcp, n, comm ->
        {
            final int r = comm.rank();
            final int halo = LARGE;
            for (int step = 0; step < 3; step++)
            {
                final List<CommFuture> pending = new ArrayList<>();
                final ByteBuffer fromLeft = floats(halo);
                final ByteBuffer fromRight = floats(halo);
                if (r > 0)
                {
                    pending.add(comm.recvAsync(fromLeft, halo, DataType.FP32, r - 1));
                }
                if (r < n - 1)
                {
                    pending.add(comm.recvAsync(fromRight, halo, DataType.FP32, r + 1));
                }
                if (r > 0)
                {
                    pending.add(comm.sendAsync(block(halo, r, r - 1), halo, DataType.FP32, r - 1));
                }
                if (r < n - 1)
                {
                    pending.add(comm.sendAsync(block(halo, r, r + 1), halo, DataType.FP32, r + 1));
                }
                joinAll(pending);
                if (r > 0)
                {
                    assertBlock(fromLeft, halo, r - 1, r);
                }
                if (r < n - 1)
                {
                    assertBlock(fromRight, halo, r + 1, r);
                }
            }
            return null;
        });
    }

    @ParameterizedTest(name = "tcp={0} n={1}")
    @MethodSource("layouts")
    void aCollectiveWaitsForTheReceiveIssuedBeforeIt(final boolean tcp, final int n) throws Exception
    {
        // Stream order between a receive and a collective: the all-reduce reads what the receive wrote.
        onEach(tcp, n, comm ->
        {
            final int r = comm.rank();
            final int count = 50_000;
            final ByteBuffer buf = floats(count);
            final CommFuture recv = comm.recvAsync(buf, count, DataType.FP32, (r + n - 1) % n);
            final CommFuture send = comm.sendAsync(block(count, r, (r + 1) % n), count, DataType.FP32,
                (r + 1) % n);
            final CommFuture sum = comm.allReduceAsync(buf, buf, count, DataType.FP32, ReduceOp.SUM);
            sum.join();
            assertTrue(recv.isDone() && send.isDone(), "the all-reduce completed before the transfers before it");
            for (int i = 0; i < count; i++)
            {
                float expected = 0;
                for (int from = 0; from < n; from++)
                {
                    expected += value(from, (from + 1) % n, i);
                }
                // Every rank sums the same values in an order fixed by the algorithm, so compare with a margin.
                assertEquals(expected, buf.getFloat(i * 4), Math.abs(expected) * 1e-5f, "element " + i);
            }
            return null;
        });
    }

    @Test
    void aBlockingSendFromOneThreadAndAReceiveFromAnotherGoTogether() throws Exception
    {
        // Sends and receives are numbered apart per peer, so a sender thread and a receiver thread may share one
        // communicator: each rank sends and receives at once, on two threads, over TCP.
        final int port = TcpConformanceTest.freePort();
        final List<Communicator> comms = Ranks.run(2, 120, rank -> Hccl.init(tcp(rank, 2, port).conclude()));
        try
        {
            Ranks.onEach(comms, 120, comm ->
            {
                final int peer = 1 - comm.rank();
                final ByteBuffer in = floats(LARGE);
                final Thread receiver = new Thread(() -> comm.recv(in, LARGE, DataType.FP32, peer), "receiver");
                final Throwable[] failed = new Throwable[1];
                receiver.setUncaughtExceptionHandler((t, e) -> failed[0] = e);
                receiver.start();
                comm.send(block(LARGE, comm.rank(), peer), LARGE, DataType.FP32, peer);
                try
                {
                    receiver.join(TimeUnit.SECONDS.toMillis(60));
                }
                catch (final InterruptedException ex)
                {
                    throw new AssertionError(ex);
                }
                assertTrue(!receiver.isAlive() && failed[0] == null, "receiver: " + failed[0]);
                assertBlock(in, LARGE, peer, comm.rank());
                return null;
            });
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void aTimedWaitForAReceiveTimesOutWithoutFailingIt() throws Exception
    {
        final List<Communicator> comms = open(false, 2);
        try
        {
            final ByteBuffer in = floats(1000);
            final CommFuture recv = comms.get(1).recvAsync(in, 1000, DataType.FP32, 0);
            assertThrows(java.util.concurrent.TimeoutException.class, () -> recv.get(200, TimeUnit.MILLISECONDS));
            assertTrue(!recv.isDone(), "still in flight after the caller's timeout");
            comms.get(0).send(block(1000, 0, 1), 1000, DataType.FP32, 1);
            recv.get(60, TimeUnit.SECONDS);
            assertBlock(in, 1000, 0, 1);
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void aReceivePostedFirstFailsAtOnceWhenTheSendIsLarger() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final CountDownLatch posted = new CountDownLatch(1);
        final long start = System.nanoTime();
        final List<HcclException> errors = Ranks.run(2, 120, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 2, port).conclude()))
            {
                comm.barrier();
                if (rank == 1)
                {
                    // Posted before the message comes: the receive is in the mailbox when rank 0's send arrives.
                    final CommFuture recv = comm.recvAsync(floats(512), 512, DataType.FP32, 0);
                    posted.countDown();
                    return assertThrows(HcclException.class, recv::join);
                }
                assertTrue(posted.await(60, TimeUnit.SECONDS));
                comm.send(floats(1024), 1024, DataType.FP32, 1);
                // The sender's part may complete; it learns of the mismatch from rank 1's abort.
                return assertThrows(HcclException.class, comm::barrier);
            }
        });
        final double seconds = (System.nanoTime() - start) / 1e9;
        assertTrue(seconds < PROMPT_SECONDS, "took " + seconds + " s: the receive waited instead of failing");
        final HcclException receiver = errors.get(1);
        assertEquals(ErrorCode.E_MISMATCH, receiver.errorCode(), receiver.getMessage());
        assertTrue(receiver.getMessage().contains("count=1024") && receiver.getMessage().contains("count=512"),
            receiver.getMessage());
        assertEquals(0, receiver.peer(), "names the sender: " + receiver.getMessage());
        assertTrue(errors.get(0).getMessage().contains("count=1024"), errors.get(0).getMessage());
    }

    @Test
    void anAllToAllVWhoseCountsDisagreeFailsAtOnceOnTheRankThatReceives() throws Exception
    {
        // Rank 0 sends rank 1 a block of 256 floats; rank 1 expects 128. Rank 1's receive is posted first.
        final int port = TcpConformanceTest.freePort();
        final long start = System.nanoTime();
        final List<HcclException> errors = Ranks.run(2, 120, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 2, port).conclude()))
            {
                comm.barrier();
                final long[] sendCounts = rank == 0 ? new long[]{4, 256} : new long[]{4, 4};
                final long[] recvCounts = rank == 0 ? new long[]{4, 4} : new long[]{128, 4};
                final long[] sendDispls = {0, sendCounts[0]};
                final long[] recvDispls = {0, recvCounts[0]};
                if (rank == 0)
                {
                    Thread.sleep(300); // lets rank 1 post its receives first; the test is valid either way
                }
                final ByteBuffer send = floats((int)(sendCounts[0] + sendCounts[1]));
                final ByteBuffer recv = floats((int)(recvCounts[0] + recvCounts[1]));
                try
                {
                    comm.allToAllV(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, DataType.FP32);
                }
                catch (final HcclException ex)
                {
                    return ex;
                }
                // Only a rank whose receives all matched may finish; it learns of the failure at its next operation.
                assertEquals(0, rank, "rank 1 received a block of the wrong size and must fail");
                return assertThrows(HcclException.class, comm::barrier);
            }
        });
        final double seconds = (System.nanoTime() - start) / 1e9;
        assertTrue(seconds < PROMPT_SECONDS, "took " + seconds + " s: the receive waited instead of failing");
        final HcclException receiver = errors.get(1);
        assertEquals(ErrorCode.E_MISMATCH, receiver.errorCode(), receiver.getMessage());
        assertTrue(receiver.getMessage().contains("1024 bytes") && receiver.getMessage().contains("expected 512"),
            receiver.getMessage());
        assertTrue(errors.get(0).getMessage().contains("1024 bytes"), errors.get(0).getMessage());
    }
}
