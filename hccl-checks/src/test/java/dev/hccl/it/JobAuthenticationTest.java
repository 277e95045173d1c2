package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The job is authenticated at the rendezvous store (issue 13's first finding): over real TCP, an outsider who reaches
 * {@code MASTER_PORT} while the job starts learns no token and cannot join, the job runs on with the right numbers,
 * and a rank with another token fails at once, saying so.
 */
@Timeout(120)
class JobAuthenticationTest
{
    private static final String TOKEN = "a secret only this job's ranks hold";

    private static CommConfigBuilder tcp(final int rank, final int port, final String token, final int seconds)
    {
        return CommConfig.builder().environment(Map.of()).rank(rank).worldSize(2).masterAddr("127.0.0.1")
            .masterPort(port).jobToken(token).connectTimeout(Duration.ofSeconds(seconds));
    }

    @Test
    void anOutsiderAtTheStoreDuringStartUpLearnsNothingAndTheJobRuns() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<int[]> results = Ranks.run(2, 90, rank ->
        {
            if (rank == 1)
            {
                // Rank 1 is late: meanwhile an outsider asks rank 0's store for the token, as before the fix.
                final String heard = OutsiderTest.ask(port, true);
                assertFalse(heard.contains(TOKEN), "the store served the token: " + heard);
            }
            try (Communicator comm = Hccl.init(tcp(rank, port, TOKEN, 60).conclude()))
            {
                final int[] value = {rank + 1, 10 * (rank + 1)};
                comm.allReduce(value, ReduceOp.SUM);
                return value;
            }
        });
        assertArrayEquals(new int[] {3, 30}, results.get(0));
        assertArrayEquals(new int[] {3, 30}, results.get(1));
    }

    @Test
    void aRankWithAnotherTokenFailsAtOnceNamingTheVariable() throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        final List<String> outcomes = Ranks.run(2, 60, rank ->
        {
            final long start = System.nanoTime();
            final HcclException ex = assertThrows(HcclException.class,
                () -> Hccl.init(tcp(rank, port, rank == 0 ? TOKEN : "another job's token", 8).conclude()).close());
            return (System.nanoTime() - start) / 1_000_000 + " ms: " + ex.getMessage();
        });
        final String rank1 = outcomes.get(1);
        assertTrue(rank1.contains("HCCL_JOB_TOKEN differs from rank 0's"), rank1);
        assertTrue(Long.parseLong(rank1.substring(0, rank1.indexOf(' '))) < 5_000, "rank 1 failed fast: " + rank1);
        // Rank 0 cannot tell that rank from a stranger, who must not be able to end the job: it waits, then names the
        // refusal beside the missing rank.
        final String rank0 = outcomes.get(0);
        assertTrue(rank0.contains("rank [1] of 2 did not arrive"), rank0);
        assertTrue(rank0.contains("rank 0's store turned away /127.0.0.1:"), rank0);
        assertTrue(rank0.contains("it does not know the job token (a rank with another HCCL_JOB_TOKEN or none"), rank0);
    }

    @Test
    void aTokenOnSomeRanksButNotRankZeroFailsEveryRankAtOnce() throws Exception
    {
        // Rank 0's job has no token, so its key is public: anyone could end its rendezvous anyway, and a rank that
        // proves a token ends it at once, naming the variable on every rank.
        final int port = TcpConformanceTest.freePort();
        final int timeout = 60;
        final List<String> outcomes = Ranks.run(3, 100, rank ->
        {
            final long start = System.nanoTime();
            final HcclException ex = assertThrows(HcclException.class,
                () -> Hccl.init(tcp(rank, port, rank == 1 ? TOKEN : null, timeout).worldSize(3).conclude()).close());
            return (System.nanoTime() - start) / 1_000_000 + " ms: " + ex.getMessage();
        });
        assertTrue(outcomes.get(1).contains("HCCL_JOB_TOKEN differs from rank 0's"), outcomes.get(1));
        for (final int rank : new int[] { 0, 2 })
        {
            assertTrue(outcomes.get(rank).contains("a rank at 127.0.0.1 has HCCL_JOB_TOKEN set, and rank 0 has none: " +
                "set the same HCCL_JOB_TOKEN on every rank, or on none"), outcomes.get(rank));
        }
        for (final String o : outcomes)
        {
            assertTrue(Long.parseLong(o.substring(0, o.indexOf(' '))) < timeout * 1000L / 2, "waited: " + o);
        }
    }
}
