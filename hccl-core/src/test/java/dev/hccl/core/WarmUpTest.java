package dev.hccl.core;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.FutureTask;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The warm-up at init ({@link WarmUp}): every rank runs the same number of all-reduces whatever its own budget and
 * whether its JVM warmed up before, so that the first call of the user's meets its peers' first call. Ranks as
 * threads, each with its own record of a warmed JVM, as if each were a process of its own.
 */
@Timeout(120)
class WarmUpTest
{
    private static final int RANKS = 3;

    /** What one rank's warm-up did. */
    private record Outcome(int allReduces, long startNanos, long endNanos, long[] firstCall)
    {
    }

    /** The reductions' warm-up: none for a budget of 0 or a job of one, and once per JVM. */
    @Test
    void theReductionsWarmUpOncePerJvmWhenThereIsABudgetAndAPeer()
    {
        assertNull(WarmUp.startKernels(2, 0));
        assertNull(WarmUp.startKernels(1, 300));
        final FutureTask<Integer> first = WarmUp.startKernels(2, 50);
        final FutureTask<Integer> second = WarmUp.startKernels(2, 50);
        // Another test of this JVM may have started it before: then neither call starts it again.
        assertNull(second, "started twice in one JVM");
        if (null != first)
        {
            assertTrue(WarmUp.awaitKernels(first, 10_000) >= 0, "did not end within its budget");
        }
        assertEquals(-1, WarmUp.awaitKernels(null, 50));
    }

    @Test
    void ranksWithDifferentBudgetsStopTogetherWhenTheLongestIsSpent() throws Exception
    {
        final int[] budgets = {1, 400, 1};
        final List<Outcome> outcomes = warmUp(budgets, new boolean[RANKS]);
        for (int r = 0; r < RANKS; r++)
        {
            assertEquals(outcomes.get(1).allReduces(), outcomes.get(r).allReduces(), "rank " + r + "'s all-reduces");
            final long afterRank1Started = outcomes.get(r).endNanos() - outcomes.get(1).startNanos();
            assertTrue(afterRank1Started >= 400_000_000L, "rank " + r + " stopped " + afterRank1Started / 1_000_000 +
                " ms after rank 1 started, before rank 1's 400 ms were spent");
            assertArrayEquals(new long[] {0 + 1 + 2}, outcomes.get(r).firstCall(), "rank " + r + "'s first call");
        }
        assertTrue(outcomes.get(0).allReduces() > 1, outcomes.get(0).allReduces() + " all-reduces");
    }

    @Test
    void ranksWhoseJvmWarmedUpBeforeAddOneAllReduce() throws Exception
    {
        final List<Outcome> outcomes = warmUp(new int[] {60_000, 60_000, 60_000}, new boolean[] {true, true, true});
        for (int r = 0; r < RANKS; r++)
        {
            assertEquals(1, outcomes.get(r).allReduces(), "rank " + r);
            assertArrayEquals(new long[] {0 + 1 + 2}, outcomes.get(r).firstCall(), "rank " + r + "'s first call");
        }
    }

    @Test
    void aRankWhoseJvmWarmedUpBeforeWaitsForTheOthersBudgets() throws Exception
    {
        final List<Outcome> outcomes = warmUp(new int[] {300, 300, 300}, new boolean[] {true, false, false});
        for (int r = 0; r < RANKS; r++)
        {
            assertEquals(outcomes.get(2).allReduces(), outcomes.get(r).allReduces(), "rank " + r);
            final long afterRank2Started = outcomes.get(r).endNanos() - outcomes.get(2).startNanos();
            assertTrue(afterRank2Started >= 300_000_000L, "rank " + r + " stopped " + afterRank2Started / 1_000_000 +
                " ms after rank 2 started, before its 300 ms were spent");
            assertArrayEquals(new long[] {0 + 1 + 2}, outcomes.get(r).firstCall(), "rank " + r + "'s first call");
        }
    }

    /** Warms up a new communicator of ranks as threads, then makes the first call of a user's: an all-reduce. */
    private static List<Outcome> warmUp(final int[] budgets, final boolean[] warmedBefore) throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(RANKS, CommConfig.builder().environment(Map.of())
            .worldSize(RANKS).execTimeout(Duration.ofSeconds(60)).conclude());
        final ExecutorService pool = Executors.newFixedThreadPool(RANKS);
        try
        {
            final List<Future<Outcome>> futures = new ArrayList<>();
            for (final Communicator comm : comms)
            {
                final int r = comm.rank();
                futures.add(pool.submit(() ->
                {
                    final long start = System.nanoTime();
                    final int allReduces = WarmUp.run(comm, budgets[r], new AtomicBoolean(warmedBefore[r]));
                    final long end = System.nanoTime();
                    final long[] value = {r};
                    comm.allReduce(value, ReduceOp.SUM);
                    return new Outcome(allReduces, start, end, value);
                }));
            }
            final List<Outcome> outcomes = new ArrayList<>();
            for (final Future<Outcome> f : futures)
            {
                outcomes.add(f.get());
            }
            return outcomes;
        }
        finally
        {
            pool.shutdownNow();
            comms.forEach(Communicator::close);
        }
    }
}
