package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code HCCL_WARMUP_MS} end to end, ranks as threads with a real rendezvous: ranks whose budgets differ meet in
 * their first call after init, over shared memory and over TCP; ranks that disagree on whether to warm up at all fail
 * at init naming the setting, instead of one rank's first call meeting the others' warm-up.
 */
@Timeout(300)
class WarmUpInitTest
{
    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void ranksWithDifferentBudgetsMeetInTheirFirstCall(final String transport) throws Exception
    {
        final int n = 3;
        final int port = TcpConformanceTest.freePort();
        final List<Communicator> comms = Ranks.run(n, 120, rank -> Hccl.init(
            Ranks.onLoopback(rank, n, port, "tcp".equals(transport)).set(CommConfig.WARMUP_MS, 1 + 150 * rank)
                .conclude()));
        try
        {
            final List<long[]> sums = Ranks.onEach(comms, 120, comm ->
            {
                assertEquals(transport, comm.transports());
                final long[] value = {comm.rank() + 1};
                comm.allReduce(value, ReduceOp.SUM);
                return value;
            });
            for (int rank = 0; rank < n; rank++)
            {
                assertArrayEquals(new long[] {1 + 2 + 3}, sums.get(rank), "rank " + rank);
            }
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void ranksThatDisagreeOnWarmingUpFailAtInitNamingTheSetting() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        Ranks.assertInitFailsOnEveryRank(2, rank -> Ranks.onLoopback(rank, 2, port, false)
            .set(CommConfig.WARMUP_MS, rank == 1 ? 0 : 100).conclude(),
            "HCCL_WARMUP_MS differs: rank 0 warms up, rank 1 has 0");
    }
}
