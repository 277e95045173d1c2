package dev.hccl.it;

import dev.hccl.api.AlgorithmChoice;
import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The algorithm catalog is open: an {@link dev.hccl.algorithms.AlgorithmPlugin} on the class path adds an algorithm
 * that {@code HCCL_ALGO} forces by name, and that runs every rank's all-reduce.
 */
@Timeout(120)
class AlgorithmPluginTest
{
    @Test
    void hcclAlgoForcesAnAlgorithmFromAPlugin() throws Exception
    {
        final int n = 3;
        final List<Communicator> comms = Hccl.initAll(n, CommConfig.builder().environment(Map.of()).worldSize(n)
            .algo("allreduce=" + StarAllReducePlugin.NAME).conclude());
        try
        {
            final AlgorithmChoice choice = comms.get(0).algorithmFor(Operation.ALL_REDUCE, 1024);
            assertEquals(StarAllReducePlugin.NAME, choice.algorithm());
            assertTrue(choice.forced());
            // Other operations keep the cost model's choice.
            assertFalse(comms.get(0).algorithmFor(Operation.ALL_GATHER, 1024).forced());
            final int runsBefore = StarAllReducePlugin.RUNS.get();
            final int[][] values = new int[n][];
            final ExecutorService ranks = Executors.newFixedThreadPool(n);
            try
            {
                final List<Future<?>> calls = new ArrayList<>();
                for (int r = 0; r < n; r++)
                {
                    final int rank = r;
                    values[r] = new int[] {r + 1, 10 * (r + 1), -r};
                    calls.add(ranks.submit(() -> comms.get(rank).allReduce(values[rank], ReduceOp.SUM)));
                }
                for (final Future<?> call : calls)
                {
                    call.get();
                }
            }
            finally
            {
                ranks.shutdownNow();
            }
            for (int r = 0; r < n; r++)
            {
                assertArrayEquals(new int[] {6, 60, -3}, values[r], "rank " + r);
            }
            assertEquals(n, StarAllReducePlugin.RUNS.get() - runsBefore, "every rank ran the plug-in's algorithm");
        }
        finally
        {
            for (final Communicator c : comms)
            {
                c.close();
            }
        }
    }
}
