package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.bench.check.CheckCase;
import dev.hccl.bench.check.CollectiveCheck;
import dev.hccl.bench.check.SharedReference;
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
    void vCollectivesScatterAndGather(final int n) throws Exception
    {
        final List<VariableCheck> cases = new ArrayList<>();
        final Operation[] rooted = {Operation.SCATTER, Operation.GATHER};
        int turn = 0;
        // Every type, two scales of uneven blocks (a few elements; a few hundred), in place and out of place, the
        // reductions taking turns, the roots too.
        for (final DataType type : DataType.values())
        {
            final ReduceOp[] ops = type.isFloatingPoint() ? ReduceOp.values() :
                new ReduceOp[]{ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN};
            for (final int scale : new int[]{0, 300})
            {
                for (final boolean inPlace : new boolean[]{false, true})
                {
                    cases.add(new VariableCheck(Operation.ALL_GATHER_V, type, null, scale, false, inPlace, 0));
                    cases.add(new VariableCheck(Operation.REDUCE_SCATTER_V, type, ops[turn % ops.length], scale, false,
                        inPlace, 0));
                    cases.add(new VariableCheck(Operation.ALL_TO_ALL_V, type, null, scale, false, inPlace, 0));
                    for (final Operation op : rooted)
                    {
                        cases.add(new VariableCheck(op, type, null, scale, false, inPlace, turn % n));
                    }
                    turn++;
                }
            }
        }
        // Every root, with empty blocks and with a few elements.
        for (int root = 0; root < n; root++)
        {
            for (final int count : new int[]{0, 5})
            {
                for (final Operation op : rooted)
                {
                    cases.add(new VariableCheck(op, DataType.FP32, null, count, true, root % 2 == 1, root));
                }
            }
        }
        // Blocks of several pipelined segments each.
        final int large = 40_000;
        cases.add(new VariableCheck(Operation.ALL_GATHER_V, DataType.FP32, null, large, false, false, 0));
        cases.add(new VariableCheck(Operation.REDUCE_SCATTER_V, DataType.FP32, ReduceOp.SUM, large, false, true, 0));
        cases.add(new VariableCheck(Operation.ALL_TO_ALL_V, DataType.FP32, null, large, false, false, 0));
        cases.add(new VariableCheck(Operation.SCATTER, DataType.FP32, null, large, true, false, n - 1));
        cases.add(new VariableCheck(Operation.GATHER, DataType.FP32, null, large, true, false, n / 2));

        final List<Communicator> comms = open(n);
        try
        {
            final List<List<String>> failures = Ranks.onEach(comms, 600, comm ->
            {
                final List<String> errors = new ArrayList<>();
                long seed = 1;
                for (final VariableCheck c : cases)
                {
                    final String error = c.run(comm, seed++);
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

    @ParameterizedTest(name = "worldSize={0}")
    @MethodSource("worldSizes")
    void arrayFormsOfEveryArrayType(final int n) throws Exception
    {
        final List<Communicator> comms = open(n);
        try
        {
            final List<List<String>> failures = Ranks.onEach(comms, 120, ArrayFormsCheck::run);
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
        // The ranks are threads of this JVM: they compute each all-reduce's expected result once between them.
        final SharedReference shared = new SharedReference(n);
        try
        {
            final List<List<String>> failures = Ranks.onEach(comms, 600, comm ->
            {
                final List<String> errors = new ArrayList<>();
                long seed = 1;
                for (final CheckCase c : cases)
                {
                    final String error = CollectiveCheck.run(comm, c, seed++, shared);
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
