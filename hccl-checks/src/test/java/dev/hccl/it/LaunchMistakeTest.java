package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Launch mistakes are answered on every rank within seconds, not at {@code HCCL_CONNECT_TIMEOUT}, saying what to
 * change: two processes with one RANK, and ranks that never arrive. {@link TlsTest} has TLS set on some ranks only.
 */
@Timeout(120)
class LaunchMistakeTest
{
    /** Far longer than the answers may take, so that waiting it out fails the tests. */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(60);

    private static CommConfig config(final int rank, final int worldSize, final int port, final Duration timeout)
    {
        return CommConfig.builder().environment(Map.of()).rank(rank).worldSize(worldSize).masterAddr("127.0.0.1")
            .masterPort(port).connectTimeout(timeout).set(ShmTransportProvider.DISABLE, true).conclude();
    }

    @Test
    void twoProcessesWithOneRankFailEveryRankAtOnceNamingTheRank() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        // World size 3 started as ranks 0, 1 and 1: rank 2 never comes, and nobody may wait for it.
        final int[] ranks = { 0, 1, 1 };
        final long start = System.nanoTime();
        final List<HcclException> errors = Ranks.run(ranks.length, 100, i -> assertThrows(HcclException.class,
            () -> Hccl.init(config(ranks[i], 3, port, CONNECT_TIMEOUT)).close()));
        final double seconds = (System.nanoTime() - start) / 1e9;
        for (final HcclException e : errors)
        {
            assertEquals(ErrorCode.E_PARA, e.errorCode(), e.getMessage());
            assertEquals(Operation.INIT, e.operation());
            assertEquals(1, e.peer(), e.getMessage());
            assertTrue(e.getMessage().contains("rank 1 was claimed by two processes (pid "), e.getMessage());
            assertTrue(e.getMessage().contains("each process of the job needs a RANK of its own, 0 to 2"),
                e.getMessage());
        }
        assertTrue(seconds < CONNECT_TIMEOUT.toSeconds() / 2.0, "took " + seconds + " s: waited for the timeout");
    }

    @Test
    void ranksStartedWithDifferentWorldSizesFailEveryRankAtOnce() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final long start = System.nanoTime();
        // Rank 0 and rank 1 think the world has 3 ranks, rank 2 that it has 4.
        final List<HcclException> errors = Ranks.run(3, 100, rank -> assertThrows(HcclException.class,
            () -> Hccl.init(config(rank, rank == 2 ? 4 : 3, port, CONNECT_TIMEOUT)).close()));
        final double seconds = (System.nanoTime() - start) / 1e9;
        for (final HcclException e : errors)
        {
            assertEquals(ErrorCode.E_PARA, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("world size mismatch: rank 0 has WORLD_SIZE=3, rank 2 4; set the " +
                "same WORLD_SIZE on every rank"), e.getMessage());
        }
        assertTrue(seconds < CONNECT_TIMEOUT.toSeconds() / 2.0, "took " + seconds + " s: waited for the timeout");
    }

    @Test
    void aRankThatArrivesAfterTheOthersFailedHearsWhyAtOnce() throws Exception
    {
        // As a new user met it: ranks 0 and 2 disagree on the world size and fail within a second; rank 1 starts only
        // after both have failed, past the store's minimum linger, and must hear the same verdict from rank 0's store
        // rather than wait its whole connect timeout for a store that is gone.
        final int port = TcpConformanceTest.freePort();
        final CountDownLatch othersFailed = new CountDownLatch(2);
        final long[] rank1Millis = new long[1];
        final List<HcclException> errors = Ranks.run(3, 100, rank ->
        {
            if (rank == 1)
            {
                othersFailed.await();
                Thread.sleep(3_000);
            }
            final long start = System.nanoTime();
            try
            {
                return assertThrows(HcclException.class,
                    () -> Hccl.init(config(rank, rank == 2 ? 4 : 3, port, CONNECT_TIMEOUT)).close());
            }
            finally
            {
                if (rank == 1)
                {
                    rank1Millis[0] = (System.nanoTime() - start) / 1_000_000;
                }
                else
                {
                    othersFailed.countDown();
                }
            }
        });
        for (final HcclException e : errors)
        {
            assertEquals(ErrorCode.E_PARA, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("world size mismatch: rank 0 has WORLD_SIZE=3, rank 2 4"),
                e.getMessage());
        }
        assertTrue(rank1Millis[0] < CONNECT_TIMEOUT.toMillis() / 2, "rank 1 took " + rank1Millis[0] + " ms");
        // Every rank has heard the verdict: rank 0's store closes without waiting out its connect timeout.
        assertTrue(portFreesWithin(port, CONNECT_TIMEOUT.toSeconds() / 2), "rank 0's store still holds " + port);
    }

    /** A rank 0 whose {@code main} ended with the error still tells a rank that starts after it failed. */
    @Test
    void aProcessWhoseInitFailedStaysToTellALateRankWhy() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final Map<String, String> env = Map.of("HCCL_CONNECT_TIMEOUT", Long.toString(CONNECT_TIMEOUT.toSeconds()),
            "HCCL_SHM_DISABLE", "1");
        try (ProcessJob job = ProcessJob.onPort(port))
        {
            job.startRank(0, 3, InitOnlyWorker.class, "128m", env);
            job.startRank(2, 4, InitOnlyWorker.class, "128m", env);
            assertTrue(job.awaitExit(1, 60) != 0, job.outputs());
            assertTrue(job.awaitLine(0, "world size mismatch", 30), job.outputs());
            Thread.sleep(3_000);
            assertTrue(job.process(0).isAlive(), "rank 0 exited before rank 1 came:\n" + job.outputs());
            final long start = System.nanoTime();
            job.startRank(1, 3, InitOnlyWorker.class, "128m", env);
            assertTrue(job.awaitExit(2, 60) != 0, job.outputs());
            final long seconds = (System.nanoTime() - start) / 1_000_000_000L;
            assertTrue(job.output(2).contains("world size mismatch: rank 0 has WORLD_SIZE=3, rank 2 4"), job.outputs());
            assertTrue(seconds < CONNECT_TIMEOUT.toSeconds() / 2, "rank 1 took " + seconds + " s:\n" + job.outputs());
            // and rank 0, whose store every rank has now heard, exits without waiting out its connect timeout
            assertTrue(job.awaitExit(0, CONNECT_TIMEOUT.toSeconds() / 2) != 0, job.outputs());
        }
    }

    private static boolean portFreesWithin(final int port, final long seconds) throws InterruptedException
    {
        final long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < deadline)
        {
            try (ServerSocket probe = new ServerSocket())
            {
                probe.setReuseAddress(true);
                probe.bind(new InetSocketAddress("127.0.0.1", port));
                return true;
            }
            catch (final IOException taken)
            {
                Thread.sleep(50);
            }
        }
        return false;
    }

    @Test
    void ranksThatNeverArriveAreReportedWithWhatToCheck() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(2, 60, rank -> assertThrows(HcclException.class,
            () -> Hccl.init(config(rank, 3, port, Duration.ofSeconds(2))).close()));
        for (final HcclException e : errors)
        {
            assertEquals(ErrorCode.E_TIMEOUT, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("rank [2] of 3 did not arrive"), e.getMessage());
            assertTrue(e.getMessage().contains("Check that it was started, and with the same MASTER_ADDR and " +
                "MASTER_PORT (or root info) and WORLD_SIZE=3 as this rank"), e.getMessage());
        }
    }
}
