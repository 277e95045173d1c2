package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What users see when a job misbehaves, over real TCP (ranks as threads): ranks that never arrive are listed,
 * mismatched collectives fail on both sides naming both operations, and a rank that stops issuing operations makes
 * the others time out naming it. None of it hangs. {@link ShmFailureTest} runs the same over shared memory.
 */
@Timeout(120)
class FailureTest
{
    /** Whether the ranks, which share a node, talk through shared memory rather than TCP. */
    boolean sharedMemory()
    {
        return false;
    }

    private CommConfigBuilder tcp(final int rank, final int n, final int port)
    {
        return CommConfig.builder().environment(Map.of()).rank(rank).worldSize(n).masterAddr("127.0.0.1")
            .masterPort(port).connectTimeout(Duration.ofSeconds(30)).execTimeout(Duration.ofSeconds(30))
            .set(ShmTransportProvider.DISABLE, !sharedMemory());
    }

    private static ByteBuffer floats(final int count)
    {
        return ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
    }

    @Test
    void ranksThatNeverArriveAreListedByEveryRankThatDid() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final long start = System.nanoTime();
        // World size 4, but ranks 2 and 3 never start.
        final List<HcclException> errors = Ranks.run(2, 60, rank -> assertThrows(HcclException.class,
            () -> Hccl.init(tcp(rank, 4, port).connectTimeout(Duration.ofSeconds(2)).conclude())));
        final double seconds = (System.nanoTime() - start) / 1e9;
        for (final HcclException e : errors)
        {
            assertEquals(ErrorCode.E_TIMEOUT, e.errorCode(), e.getMessage());
            assertEquals(Operation.INIT, e.operation());
            assertTrue(e.getMessage().contains("ranks [2, 3] of 4 did not arrive"), e.getMessage());
        }
        assertTrue(seconds < 15, "took " + seconds + " s to report missing ranks with a 2 s timeout");
    }

    @Test
    void differentCollectivesAtOneSequenceNumberFailOnBothSidesNamingBoth() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(2, 60, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 2, port).conclude()))
            {
                comm.barrier(); // one good operation first: the mismatch is at #1
                final ByteBuffer buf = floats(64);
                if (rank == 0)
                {
                    return assertThrows(HcclException.class,
                        () -> comm.allReduce(buf, buf, 64, DataType.FP32, ReduceOp.SUM));
                }
                return assertThrows(HcclException.class, () -> comm.allGather(floats(32), buf, 32, DataType.FP32));
            }
        });
        for (final HcclException e : errors)
        {
            final String m = e.getMessage();
            assertTrue(m.contains("allReduce(count=64, FP32, SUM)") && m.contains("allGather(count=32, FP32)"),
                "the error must name both operations: " + m);
            assertTrue(m.contains("#1"), "the error must name the sequence number: " + m);
        }
        // The rank that sees the other's message first reports E_MISMATCH; the other learns of it through the abort
        // (E_REMOTE), which carries the same account of both operations.
        assertTrue(errors.stream().anyMatch(e -> e.errorCode() == ErrorCode.E_MISMATCH), errors.toString());
        assertTrue(errors.stream().allMatch(e -> e.errorCode() == ErrorCode.E_MISMATCH ||
            e.errorCode() == ErrorCode.E_REMOTE), errors.toString());
    }

    /**
     * E4M3 and E5M2 have the same size, so the bytes on the wire agree and only the fingerprint can tell: ranks that
     * disagree on the FP8 format must fail, naming both, rather than reduce one format's bits as the other's.
     */
    @Test
    void fp8FormatsThatDisagreeAreAMismatchThoughTheirSizesAgree() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(2, 60, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 2, port).conclude()))
            {
                final ByteBuffer buf = ByteBuffer.allocateDirect(64);
                final DataType type = rank == 0 ? DataType.FP8_E4M3 : DataType.FP8_E5M2;
                return assertThrows(HcclException.class, () -> comm.allReduce(buf, buf, 64, type, ReduceOp.SUM));
            }
        });
        for (final HcclException e : errors)
        {
            assertTrue(e.getMessage().contains("FP8_E4M3") && e.getMessage().contains("FP8_E5M2"),
                "the error must name both formats: " + e.getMessage());
        }
        assertTrue(errors.stream().anyMatch(e -> e.errorCode() == ErrorCode.E_MISMATCH), errors.toString());
        assertTrue(errors.stream().allMatch(e -> e.errorCode() == ErrorCode.E_MISMATCH ||
            e.errorCode() == ErrorCode.E_REMOTE), errors.toString());
    }

    @Test
    void vCollectiveCountsThatDisagreeAreAMismatch() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(2, 60, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 2, port).conclude()))
            {
                // Rank 0 expects 4 elements from rank 1, which sends 6: each is consistent with itself.
                final long[] counts = rank == 0 ? new long[]{4, 4} : new long[]{4, 6};
                final int own = (int)counts[rank];
                return assertThrows(HcclException.class, () -> comm.allGatherV(floats(own), own, floats(10), counts,
                    new long[]{0, 4}, DataType.FP32));
            }
        });
        for (final HcclException e : errors)
        {
            final String m = e.getMessage();
            assertTrue(m.contains("allGatherV(count=8, FP32)") && m.contains("allGatherV(count=10, FP32)"),
                "the error must name both totals: " + m);
        }
        assertTrue(errors.stream().anyMatch(e -> e.errorCode() == ErrorCode.E_MISMATCH), errors.toString());
        assertTrue(errors.stream().allMatch(e -> e.errorCode() == ErrorCode.E_MISMATCH ||
            e.errorCode() == ErrorCode.E_REMOTE), errors.toString());
    }

    @Test
    void vCollectiveCountsThatDisagreeWithEqualTotalsAreAMismatchNotATruncation() throws Exception
    {
        // Each rank gives the other's block half the size the other sends, and the totals agree, so the fingerprints
        // match and the first segment of each block has the length its receive expects: the second segment is left
        // over, which must fail the operation, or, when it comes only after this rank has finished (a sender the
        // scheduler held back between its two segments), the next one: never a silent success.
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(2, 60, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 2, port).segmentBytes(1024).conclude()))
            {
                final long[] counts = rank == 0 ? new long[]{512, 256} : new long[]{256, 512};
                final long[] displs = {0, counts[0]};
                final int own = (int)counts[rank];
                return assertThrows(HcclException.class, () ->
                {
                    comm.allGatherV(floats(own), own, floats(768), counts, displs, DataType.FP32);
                    comm.barrier(); // the peer's leftover comes before its barrier message: no later than here
                });
            }
        });
        assertTrue(errors.stream().anyMatch(e -> e.errorCode() == ErrorCode.E_MISMATCH &&
            e.getMessage().contains("that no receive took")), errors.toString());
        assertTrue(errors.stream().allMatch(e -> e.errorCode() == ErrorCode.E_MISMATCH ||
            e.errorCode() == ErrorCode.E_REMOTE), errors.toString());
    }

    @Test
    void allToAllVCountsThatDisagreeNameTheArgumentsAndElementsNotACountOfZero() throws Exception
    {
        // Rank 0 sends rank 1 six elements where rank 1 expects four; the other pair agrees. allToAllV's fingerprint
        // has no count (none is the same on every rank), so the error must not print one but say which counts differ.
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(2, 60, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 2, port).conclude()))
            {
                final long[] sendCounts = rank == 0 ? new long[]{2, 6} : new long[]{3, 3};
                final long[] recvCounts = rank == 0 ? new long[]{2, 3} : new long[]{4, 3};
                final long[] sendDispls = {0, sendCounts[0]};
                final long[] recvDispls = {0, recvCounts[0]};
                try
                {
                    comm.allToAllV(floats(8), sendCounts, sendDispls, floats(7), recvCounts, recvDispls,
                        DataType.FP32);
                }
                catch (final HcclException ex)
                {
                    return ex;
                }
                // Only rank 0, whose receives all matched, may finish; it learns of the failure at its next operation.
                assertEquals(0, rank, "rank 1 received a block of the wrong size and must fail");
                return assertThrows(HcclException.class, comm::barrier);
            }
        });
        final HcclException receiver = errors.get(1);
        final String m = receiver.getMessage();
        assertEquals(ErrorCode.E_MISMATCH, receiver.errorCode(), m);
        assertTrue(m.contains("rank 0 sent a message of 24 bytes (6 FP32 elements) in allToAllV(FP32)") &&
            m.contains("this rank expected 16 bytes (4 elements)") &&
            m.contains("rank 0's sendCounts entry for this rank and this rank's recvCounts entry for rank 0"), m);
        for (final HcclException e : errors)
        {
            assertTrue(!e.getMessage().contains("count=0") && e.getMessage().contains("sendCounts"), e.getMessage());
        }
    }

    @Test
    void ranksThatChooseAlgorithmsDifferentlyFailAtInitNotAtTheFirstCollective() throws Exception
    {
        // Different algorithms would wait for messages that never come until HCCL_EXEC_TIMEOUT; the rendezvous
        // compares HCCL_ALGO and HCCL_DETERMINISTIC first (blanks and case aside).
        final int port = TcpConformanceTest.freePort();
        final long start = System.nanoTime();
        final List<Throwable> outcomes = Ranks.run(2, 100, rank ->
        {
            final CommConfigBuilder b = tcp(rank, 2, port).connectTimeout(Duration.ofSeconds(60));
            try (Communicator comm = Hccl.init((rank == 1 ? b.algo("allreduce = RING") : b.algo("allreduce=ring"))
                .deterministic(rank == 1).conclude()))
            {
                comm.barrier(); // only if init wrongly succeeded: the assertions below then fail
                return null;
            }
            catch (final HcclException ex)
            {
                return ex;
            }
        });
        final Throwable rank1 = outcomes.get(1);
        assertTrue(rank1 instanceof HcclException && ((HcclException)rank1).errorCode() == ErrorCode.E_PARA &&
            rank1.getMessage().contains("HCCL_ALGO/HCCL_DETERMINISTIC/HCCL_TOPO_PROBE differ"), String.valueOf(rank1));
        assertTrue(rank1.getMessage().contains("rank 0 has HCCL_ALGO=allreduce=ring, deterministic=false, " +
            "probe=off; rank 1 has HCCL_ALGO=allreduce=ring, deterministic=true, probe=off"), rank1.getMessage());
        // Rank 0 is told at once, naming the settings, not at the connect timeout.
        assertTrue(outcomes.get(0) instanceof HcclException &&
            outcomes.get(0).getMessage().contains("HCCL_ALGO/HCCL_DETERMINISTIC/HCCL_TOPO_PROBE differ"),
            "rank 0 must not be left with a communicator of one rank missing: " + outcomes.get(0));
        final double seconds = (System.nanoTime() - start) / 1e9;
        assertTrue(seconds < 30, "took " + seconds + " s: waited for the connect timeout");
    }

    @Test
    void differentCountsAreAMismatchToo() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(3, 60, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 3, port).conclude()))
            {
                final int count = rank == 2 ? 99 : 100;
                final ByteBuffer buf = floats(count);
                return assertThrows(HcclException.class,
                    () -> comm.allReduce(buf, buf, count, DataType.FP32, ReduceOp.SUM));
            }
        });
        for (final HcclException e : errors)
        {
            assertTrue(e.getMessage().contains("count=99") && e.getMessage().contains("count=100"), e.getMessage());
        }
    }

    @Test
    void aRootThatFinishesFirstLearnsOfTheMismatchAtItsNextOperation() throws Exception
    {
        // The broadcast root only sends: it can finish before its peer even looks. The peer's abort reaches it, so
        // its next operation fails with the peer's account of both operations.
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(2, 60, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 2, port).conclude()))
            {
                final ByteBuffer buf = floats(16);
                return assertThrows(HcclException.class, () ->
                {
                    if (rank == 0)
                    {
                        comm.broadcast(buf, 16, DataType.FP32, 0);
                    }
                    else
                    {
                        comm.allReduce(buf, buf, 16, DataType.FP32, ReduceOp.SUM);
                    }
                    comm.barrier();
                });
            }
        });
        for (final HcclException e : errors)
        {
            assertTrue(e.getMessage().contains("broadcast(count=16, FP32, root=0)") &&
                e.getMessage().contains("allReduce(count=16, FP32, SUM)"), e.getMessage());
        }
    }

    @Test
    void aBroadcastRootThatOneRankNamesDifferentlyIsAnErrorOnEveryRank() throws Exception
    {
        // Rank 1 believes itself the root, ranks 0 and 2 name rank 0: two ranks believe they only send. Over
        // messages, the rank that receives finds the mismatch and the senders learn of it by its abort, at their next
        // operation at the latest. In the node arena no message is matched: every rank compares the others'
        // operation before it returns, so all fail at the broadcast itself.
        final int port = TcpConformanceTest.freePort();
        final List<HcclException> errors = Ranks.run(3, 60, rank ->
        {
            try (Communicator comm = Hccl.init(tcp(rank, 3, port).conclude()))
            {
                final ByteBuffer buf = floats(1024);
                comm.barrier();
                final HcclException atBroadcast = assertThrows(HcclException.class, () ->
                {
                    comm.broadcast(buf, 1024, DataType.FP32, rank == 1 ? 1 : 0);
                    if (!sharedMemory())
                    {
                        comm.barrier();
                    }
                });
                if (sharedMemory())
                {
                    assertEquals(Operation.BROADCAST, atBroadcast.operation(), atBroadcast.getMessage());
                }
                return atBroadcast;
            }
        });
        for (final HcclException e : errors)
        {
            assertTrue(e.errorCode() == ErrorCode.E_MISMATCH || e.errorCode() == ErrorCode.E_REMOTE, e.getMessage());
            assertTrue(e.getMessage().contains("root=0") && e.getMessage().contains("root=1"),
                "the error must name both roots: " + e.getMessage());
        }
        assertTrue(errors.stream().anyMatch(e -> e.errorCode() == ErrorCode.E_MISMATCH), errors.toString());
    }

    @Test
    void aRankThatStopsIssuingOperationsTimesOutNamingIt() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<Object> results = Ranks.run(2, 60, rank ->
        {
            final Communicator idle = rank == 1 ?
                Hccl.init(tcp(rank, 2, port).execTimeout(Duration.ofSeconds(1)).conclude()) : null;
            if (idle != null)
            {
                Thread.sleep(4000); // alive, connected, but never calls the collective
                // Its communicator failed meanwhile (rank 0's abort): close() says so, as no operation did.
                final HcclException atClose = assertThrows(HcclException.class, idle::close);
                assertTrue(atClose.getMessage().contains("close(): the communicator failed after its last " +
                    "operation") && atClose.getMessage().contains("rank 1 is behind"), atClose.getMessage());
                return "idle";
            }
            try (Communicator comm = Hccl.init(tcp(rank, 2, port).execTimeout(Duration.ofSeconds(1)).conclude()))
            {
                final long start = System.nanoTime();
                final ByteBuffer buf = floats(16);
                final HcclException e = assertThrows(HcclException.class,
                    () -> comm.allReduce(buf, buf, 16, DataType.FP32, ReduceOp.SUM));
                final double seconds = (System.nanoTime() - start) / 1e9;
                assertEquals(ErrorCode.E_TIMEOUT, e.errorCode(), e.getMessage());
                assertEquals(1, e.peer(), e.getMessage());
                assertTrue(e.getMessage().contains("rank 1") && e.getMessage().contains("allReduce"), e.getMessage());
                assertTrue(seconds < 3, "a 1 s timeout took " + seconds + " s");
                // The communicator has failed: later operations fail fast with the original cause.
                final HcclException later = assertThrows(HcclException.class, comm::barrier);
                assertTrue(later.getMessage().contains("failed earlier"), later.getMessage());
                assertSame(e.getCause(), later.getCause().getCause(), "later operations carry the original cause");
                return e;
            }
        });
        assertTrue(results.get(0) instanceof HcclException);
    }
}
