package dev.hccl.bench;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;

/**
 * Ranks as threads of this JVM: {@link Hccl#initAll} once per {@code --algo} value, each rank's communicator handed
 * to the thread of that rank.
 */
final class InJvmJob
{
    private final int ranks;
    private final Map<String, List<Communicator>> byAlgo = new HashMap<>();
    private final List<String> opened = new ArrayList<>();

    InJvmJob(final int ranks)
    {
        this.ranks = ranks;
    }

    /**
     * The factory of one rank: the first rank to ask for an algorithm creates every rank's communicator for it.
     */
    CommunicatorFactory factory(final int rank)
    {
        return algo -> open(algo, rank);
    }

    /**
     * The algorithms communicators were created for, in order (null for the default).
     */
    synchronized List<String> opened()
    {
        return List.copyOf(opened);
    }

    private synchronized Communicator open(final String algo, final int rank)
    {
        return byAlgo.computeIfAbsent(String.valueOf(algo), key ->
        {
            opened.add(String.valueOf(algo));
            return Hccl.initAll(ranks, CommConfig.builder().environment(Map.of()).worldSize(ranks).algo(algo)
                .conclude());
        }).get(rank);
    }

    /**
     * Runs {@code body} for every rank on its own thread and returns the results by rank.
     */
    static <T> List<T> onEveryRank(final int ranks, final IntFunction<T> body) throws Exception
    {
        final ExecutorService pool = Executors.newFixedThreadPool(ranks);
        try
        {
            final List<Future<T>> futures = new ArrayList<>();
            for (int r = 0; r < ranks; r++)
            {
                final int rank = r;
                futures.add(pool.submit(() -> body.apply(rank)));
            }
            final List<T> results = new ArrayList<>();
            for (final Future<T> f : futures)
            {
                try
                {
                    results.add(f.get(60, TimeUnit.SECONDS));
                }
                catch (final ExecutionException ex)
                {
                    throw new AssertionError("a rank failed: " + ex.getCause(), ex.getCause());
                }
                catch (final TimeoutException ex)
                {
                    throw new AssertionError("a rank did not finish within 60 s", ex);
                }
            }
            return results;
        }
        finally
        {
            pool.shutdownNow();
        }
    }
}
