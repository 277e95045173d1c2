package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ncclCommAbort: abort() from another thread ends every wait on the communicator at once, here and on the peers,
 * over TCP; a send held by the rendezvous protocol (its receive never posted) ends too. In the node arena, a peer
 * does not complete the aborted operation with what it had posted.
 */
@Timeout(120)
class AbortTest
{
    @Test
    void abortFromAnotherThreadEndsEveryWaitHereAndOnThePeersAtOnce() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<Communicator> comms = Ranks.run(3, 60, rank -> Hccl.init(CommConfig.builder()
            .environment(Map.of()).set(ShmTransportProvider.DISABLE, true)
            .rank(rank).worldSize(3).masterAddr("127.0.0.1").masterPort(port)
            .eagerBudget(0) // the send below waits for a clear to send that never comes
            .execTimeout(Duration.ofSeconds(100)).connectTimeout(Duration.ofSeconds(60)).conclude()));
        try
        {
            final ByteBuffer a = ByteBuffer.allocateDirect(1 << 20);
            final ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            final ByteBuffer c = ByteBuffer.allocateDirect(1 << 20);
            // Rank 0 waits for a message rank 1 never sends, and sends one rank 2 never receives; ranks 1 and 2
            // wait for messages from each other.
            final CommFuture recv0 = comms.get(0).recvAsync(a, 1 << 20, DataType.UINT8, 1);
            final CommFuture send0 = comms.get(0).sendAsync(b, 1 << 20, DataType.UINT8, 2);
            final CommFuture recv1 = comms.get(1).recvAsync(c, 1 << 20, DataType.UINT8, 2);
            final CommFuture recv2 = comms.get(2).recvAsync(ByteBuffer.allocateDirect(8), 8, DataType.UINT8, 1);
            Thread.sleep(300);
            assertTrue(!recv0.isDone() && !send0.isDone() && !recv1.isDone() && !recv2.isDone());
            final long start = System.nanoTime();
            final Thread aborter = new Thread(() -> comms.get(0).abort());
            aborter.start();
            aborter.join();
            final HcclException local = assertThrows(HcclException.class, recv0::join);
            assertEquals(ErrorCode.E_UNAVAIL, local.errorCode(), local.getMessage());
            assertTrue(local.getMessage().contains("aborted by the application"), local.getMessage());
            assertThrows(HcclException.class, send0::join, "the send held by the rendezvous ends too");
            for (final CommFuture remote : List.of(recv1, recv2))
            {
                final HcclException ex = assertThrows(HcclException.class, remote::join);
                assertEquals(ErrorCode.E_REMOTE, ex.errorCode(), ex.getMessage());
                assertTrue(ex.getMessage().contains("rank 0 failed: ") &&
                    ex.getMessage().contains("aborted by the application"), ex.getMessage());
            }
            final double seconds = (System.nanoTime() - start) / 1e9;
            assertTrue(seconds < 5, "the waits took " + seconds + " s to end");
            assertThrows(HcclException.class, () -> comms.get(0).barrier(), "later operations fail too");
        }
        finally
        {
            closeAfterAbort(comms);
        }
    }

    @Test
    void aPeerDoesNotCompleteWithWhatAnAbortedOperationPostedInTheNodeArena() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final int count = 1024; // one round of signals: every rank reads every rank's data as soon as it is posted
        final List<Communicator> comms = Ranks.run(2, 60, rank -> Hccl.init(CommConfig.builder()
            .environment(Map.of()).rank(rank).worldSize(2).masterAddr("127.0.0.1").masterPort(port)
            .algo("allreduce=arena").execTimeout(Duration.ofSeconds(100)).connectTimeout(Duration.ofSeconds(60))
            .conclude()));
        try
        {
            final AtomicReference<Throwable> aborted = new AtomicReference<>();
            final Thread posting = new Thread(() ->
            {
                try
                {
                    final ByteBuffer data = floats(count, 1);
                    comms.get(0).allReduce(data, data, count, DataType.FP32, ReduceOp.SUM);
                }
                catch (final Throwable ex)
                {
                    aborted.set(ex);
                }
            }, "posting");
            posting.start();
            // Rank 0 has posted its data in the arena and waits for rank 1's, which has issued nothing yet.
            Ranks.awaitFrame(posting, "dev.hccl.core.op.OpContext", "awaitSignalWaiting");
            comms.get(0).abort();
            // Rank 1's reason to fail is on its way over the link; the arena already holds everything its operation
            // would read.
            final ByteBuffer data = floats(count, 2);
            final HcclException remote = assertThrows(HcclException.class,
                () -> comms.get(1).allReduce(data, data, count, DataType.FP32, ReduceOp.SUM),
                "rank 1 completed an operation that rank 0 had aborted");
            assertEquals(ErrorCode.E_REMOTE, remote.errorCode(), remote.getMessage());
            assertTrue(remote.getMessage().contains("rank 0 failed: ") &&
                remote.getMessage().contains("aborted by the application"), remote.getMessage());
            posting.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(aborted.get() instanceof HcclException, "rank 0: " + aborted.get());
            assertEquals(ErrorCode.E_UNAVAIL, ((HcclException)aborted.get()).errorCode(), aborted.get().getMessage());
        }
        finally
        {
            closeAfterAbort(comms);
        }
    }

    private static ByteBuffer floats(final int count, final float value)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(count * Float.BYTES).order(ByteOrder.nativeOrder());
        for (int i = 0; i < count; i++)
        {
            b.putFloat(i * Float.BYTES, value);
        }
        return b;
    }

    /** Closes every rank's communicator; a close that tells the abort again is expected. */
    private static void closeAfterAbort(final List<Communicator> comms) throws Exception
    {
        Ranks.onEach(comms, 60, comm ->
        {
            try
            {
                comm.close();
            }
            catch (final HcclException expected)
            {
                // the abort, told again
            }
            return null;
        });
    }
}
