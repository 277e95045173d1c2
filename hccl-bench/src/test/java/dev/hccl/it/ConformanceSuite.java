package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.tools.check.CheckCase;
import dev.hccl.tools.check.CollectiveCheck;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One suite of collective checks, run against every transport (as Netty runs one socket suite against each of its
 * transports): every operation, data type and reduction, counts 0, 1, 7, 1000 and a million and three, in place and
 * out of place, for each world size the transport's subclass names. Each rank checks its own result against an
 * independent reference; all ranks agreeing with the reference means all hold the same bits.
 */
abstract class ConformanceSuite
{
    static final int LARGE_COUNT = 1_000_003;
    static final int[] SMALL_COUNTS = {0, 1, 7, 1000};

    /**
     * Creates the communicators of a cluster of {@code n} ranks over the transport under test.
     */
    abstract List<Communicator> open(int n) throws Exception;

    @ParameterizedTest(name = "worldSize={0}")
    @MethodSource("worldSizes")
    void everyOperationTypeAndReductionAtSmallCounts(final int n) throws Exception
    {
        final List<CheckCase> cases = CollectiveCheck.matrix(n, SMALL_COUNTS, DataType.values(), ReduceOp.values());
        runCases(n, cases);
    }

    @ParameterizedTest(name = "worldSize={0}")
    @MethodSource("worldSizes")
    void everyOperationAndTypeAtAMillionAndThree(final int n) throws Exception
    {
        // A million and three elements, not divisible by any world size here: many pipelined segments per chunk.
        // Operations whose buffers hold n blocks take a million and three in all, so memory stays bounded.
        final List<CheckCase> cases = new ArrayList<>();
        final ReduceOp[] ops = {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN};
        int i = 0;
        for (final DataType type : DataType.values())
        {
            for (final CheckCase c : CollectiveCheck.matrix(n, new int[]{LARGE_COUNT}, new DataType[]{type},
                new ReduceOp[]{ops[i++ % ops.length]}))
            {
                if (c.inPlace() && c.operation() != dev.hccl.api.Operation.ALL_REDUCE)
                {
                    continue;
                }
                final boolean blocks = c.operation() == dev.hccl.api.Operation.ALL_GATHER ||
                    c.operation() == dev.hccl.api.Operation.REDUCE_SCATTER ||
                    c.operation() == dev.hccl.api.Operation.ALL_TO_ALL;
                cases.add(blocks ? new CheckCase(c.operation(), c.type(), c.reduceOp(), LARGE_COUNT / n + 1,
                    c.inPlace(), c.root()) : c);
            }
        }
        runCases(n, cases);
    }

    @ParameterizedTest(name = "worldSize={0}")
    @MethodSource("worldSizes")
    void barrierHoldsEveryRankUntilAllArrive(final int n) throws Exception
    {
        final List<Communicator> comms = open(n);
        try
        {
            final AtomicInteger arrived = new AtomicInteger();
            final List<Integer> seen = Ranks.onEach(comms, 60, comm ->
            {
                int min = Integer.MAX_VALUE;
                for (int round = 1; round <= 20; round++)
                {
                    arrived.incrementAndGet();
                    comm.barrier();
                    min = Math.min(min, arrived.get() - (round - 1) * n);
                    comm.barrier(); // nobody starts the next round before everyone has read this one's count
                }
                return min;
            });
            for (final int s : seen)
            {
                assertEquals(n, s, "a rank left a barrier before every rank had entered it");
            }
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    private void runCases(final int n, final List<CheckCase> cases) throws Exception
    {
        assertTrue(cases.size() > 0);
        final List<Communicator> comms = open(n);
        try
        {
            final List<List<String>> failures = Ranks.onEach(comms, 600, comm ->
            {
                final List<String> errors = new ArrayList<>();
                long seed = 1;
                for (final CheckCase c : cases)
                {
                    final String error = CollectiveCheck.run(comm, c, seed++);
                    if (error != null && errors.size() < 20)
                    {
                        errors.add(error);
                    }
                }
                return errors;
            });
            for (final List<String> errors : failures)
            {
                assertNull(errors.isEmpty() ? null : errors, "wrong results");
            }
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }
}
