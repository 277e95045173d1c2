package dev.hccl.core.op;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import dev.hccl.transport.netty.TcpTransportProvider;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * close() confirms that every rank issued the same collectives, so that a disagreement no message revealed is not
 * silent. Ranks as threads, closed one after another from one thread, as tests and users do.
 */
@Timeout(60)
class CloseConfirmationTest
{
    @Test
    void collectivesThatDifferWithoutAMessageBetweenThemAreReportedByClose() throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(2, CommConfig.builder().environment(Map.of()).worldSize(2)
            .conclude());
        final ExecutorService pool = Executors.newFixedThreadPool(2);
        try
        {
            // Empty all-reduces exchange no data: the reductions' difference shows only in the histories.
            final List<Future<?>> runs = new ArrayList<>();
            for (int r = 0; r < 2; r++)
            {
                final Communicator comm = comms.get(r);
                final ReduceOp op = r == 0 ? ReduceOp.SUM : ReduceOp.MAX;
                runs.add(pool.submit(() ->
                {
                    final ByteBuffer b = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
                    comm.allReduce(b, b, 2, DataType.FP32, ReduceOp.SUM);
                    comm.allReduce(b, b, 0, DataType.FP32, op);
                    return null;
                }));
            }
            final List<String> told = new ArrayList<>();
            for (final Future<?> run : runs)
            {
                try
                {
                    run.get();
                }
                catch (final java.util.concurrent.ExecutionException ex)
                {
                    told.add("op: " + ex.getCause().getMessage());
                }
            }
            for (final Communicator comm : comms)
            {
                try
                {
                    comm.close();
                }
                catch (final HcclException ex)
                {
                    assertEquals(ErrorCode.E_MISMATCH, ex.errorCode(), ex.getMessage());
                    told.add("close: " + ex.getMessage());
                }
            }
            assertTrue(told.stream().anyMatch(t -> t.contains("operation mismatch at #1") &&
                t.contains("allReduce(count=0, FP32, MAX)") && t.contains("allReduce(count=0, FP32, SUM)")),
                told.toString());
        }
        finally
        {
            pool.shutdownNow();
        }
    }

    /**
     * A rank that closes (it failed, or left its loop early) while the others wait in a collective it never issued:
     * they fail as soon as its closing record arrives, naming it, rather than when its close gives up waiting for
     * theirs after HCCL_CONNECT_TIMEOUT. Ranks as threads, over shared memory as Spark's local mode runs them, and over
     * TCP links of four connections, where the closing rank's last data may arrive after its record: the collectives
     * it did issue must still complete.
     */
    @ParameterizedTest(name = "tcp={0}")
    @ValueSource(booleans = {false, true})
    void aRankThatClosesEarlyFailsThoseWaitingForItAtOnce(final boolean tcp) throws Exception
    {
        final Duration patience = Duration.ofSeconds(40);
        final int shared = 20;
        final int floats = 256 * 1024;
        final String root = Hccl.getRootInfo(CommConfig.builder().environment(Map.of()).masterAddr("127.0.0.1")
            .connectTimeout(patience).conclude());
        final ExecutorService pool = Executors.newFixedThreadPool(3);
        try
        {
            final List<Future<String>> runs = new ArrayList<>();
            for (int r = 0; r < 3; r++)
            {
                final int rank = r;
                runs.add(pool.submit(() ->
                {
                    final Communicator comm = Hccl.init(CommConfig.builder().environment(Map.of()).rootInfo(root)
                        .rank(rank).worldSize(3).connectTimeout(patience).set(ShmTransportProvider.DISABLE, tcp)
                        .set(TcpTransportProvider.SOCKET_NSOCKS, 4).conclude());
                    final ByteBuffer b = ByteBuffer.allocateDirect(floats * 4).order(ByteOrder.nativeOrder());
                    try
                    {
                        for (int i = 0; i < shared; i++)
                        {
                            comm.allReduce(b, b, floats, DataType.FP32, ReduceOp.SUM);
                        }
                        if (rank != 2)
                        {
                            comm.allReduce(b, b, floats, DataType.FP32, ReduceOp.SUM);
                            return "rank " + rank + " completed the extra all-reduce";
                        }
                        return "closing";
                    }
                    catch (final HcclException ex)
                    {
                        return ex.errorCode() + " " + ex.getMessage();
                    }
                    finally
                    {
                        try
                        {
                            comm.close();
                        }
                        catch (final HcclException ignored)
                        {
                            // rank 2's close reports the difference too: E_MISMATCH
                        }
                    }
                }));
            }
            final long start = System.nanoTime();
            for (int r = 0; r < 2; r++)
            {
                final String said = runs.get(r).get();
                assertTrue(said.startsWith("E_REMOTE") && said.contains("rank 2 closed its communicator after " +
                    "issuing " + shared + " collectives, while this rank waits for its data in collective #" + shared),
                    said);
            }
            final long waited = (System.nanoTime() - start) / 1_000_000;
            assertTrue(waited < patience.toMillis() / 2, "the ranks waited " + waited + " ms for the closed one");
            assertEquals("closing", runs.get(2).get());
        }
        finally
        {
            pool.shutdownNow();
        }
    }

    @Test
    void ranksThatIssuedTheSameCollectivesCloseQuietly()
    {
        final List<Communicator> comms = Hccl.initAll(3, CommConfig.builder().environment(Map.of()).worldSize(3)
            .conclude());
        final List<Thread> threads = new ArrayList<>();
        for (final Communicator comm : comms)
        {
            final Thread t = new Thread(() -> comm.barrier());
            threads.add(t);
            t.start();
        }
        threads.forEach(t ->
        {
            try
            {
                t.join();
            }
            catch (final InterruptedException ex)
            {
                throw new AssertionError(ex);
            }
        });
        HcclException thrown = null;
        for (final Communicator comm : comms)
        {
            try
            {
                comm.close();
            }
            catch (final HcclException ex)
            {
                thrown = ex;
            }
        }
        assertNull(thrown);
    }
}
