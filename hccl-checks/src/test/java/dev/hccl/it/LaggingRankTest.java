package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
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
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: with a short operation timeout, the ranks that timed out blamed the neighbour they waited for, which only
 * waited in turn. Now a timeout asks every peer where it is, and each error names the rank that is behind.
 */
@Timeout(120)
class LaggingRankTest
{
    @Test
    void aTimeoutNamesTheRankThatHasNotIssuedTheOperationNotTheNeighbourWaitedFor() throws Exception
    {
        final int n = 3;
        final int lagging = 2;
        final int port = TcpConformanceTest.freePort();
        final List<String> errors = Ranks.run(n, 90, rank ->
        {
            try (Communicator comm = Hccl.init(CommConfig.builder().environment(Map.of())
                .set(ShmTransportProvider.DISABLE, true)
                .rank(rank).worldSize(n).masterAddr("127.0.0.1").masterPort(port)
                .algo("ring") // rank 1 waits for rank 0, which waits for rank 2: the neighbour is innocent
                .execTimeout(Duration.ofSeconds(3))
                .connectTimeout(Duration.ofSeconds(60))
                .conclude()))
            {
                final ByteBuffer buf = ByteBuffer.allocateDirect(4 * 1024).order(ByteOrder.nativeOrder());
                comm.allReduce(buf, buf, 1024, DataType.FP32, ReduceOp.SUM); // #0: everyone
                if (rank == lagging)
                {
                    Thread.sleep(8_000); // busy elsewhere, far past the others' timeout
                }
                try
                {
                    comm.allReduce(buf, buf, 1024, DataType.FP32, ReduceOp.SUM);
                    return "no error";
                }
                catch (final HcclException ex)
                {
                    return ex.errorCode() + " peer " + ex.peer() + ": " + ex.getMessage();
                }
            }
        });
        for (int r = 0; r < n; r++)
        {
            if (r == lagging)
            {
                continue;
            }
            final String error = errors.get(r);
            assertTrue(error.startsWith(ErrorCode.E_TIMEOUT + " peer " + lagging + ":") ||
                error.startsWith(ErrorCode.E_REMOTE.toString()), "rank " + r + ": " + error);
            assertTrue(error.contains("rank " + lagging + " is behind: idle after collective #0"),
                "rank " + r + " must name rank " + lagging + " as behind: " + error);
        }
        assertTrue(errors.get(lagging).startsWith(ErrorCode.E_REMOTE.toString()),
            "the lagging rank learns of its peers' failure: " + errors.get(lagging));
        assertEquals(n, errors.size());
    }
}
