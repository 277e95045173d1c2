package dev.hccl.training;

import dev.hccl.api.Communicator;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ExecutionException;

/** Runs one task per rank, each on its own thread, as the ranks of a job would in their processes. */
final class RankThreads
{
    /** A rank's work. */
    interface RankTask<T>
    {
        T run(Communicator comm) throws Exception;
    }

    /** What a rank's task returned, or what it threw. */
    record Outcome<T>(T value, Throwable failure)
    {
        T get()
        {
            if (failure != null)
            {
                throw new AssertionError("a rank failed: " + failure, failure);
            }
            return value;
        }
    }

    private RankThreads()
    {
    }

    static <T> List<Outcome<T>> each(final List<Communicator> comms, final RankTask<T> task) throws Exception
    {
        final ExecutorService pool = Executors.newFixedThreadPool(comms.size());
        try
        {
            final List<Future<T>> futures = new ArrayList<>();
            for (final Communicator comm : comms)
            {
                futures.add(pool.submit(() -> task.run(comm)));
            }
            final List<Outcome<T>> outcomes = new ArrayList<>();
            for (final Future<T> f : futures)
            {
                try
                {
                    outcomes.add(new Outcome<>(f.get(120, TimeUnit.SECONDS), null));
                }
                catch (final ExecutionException ex)
                {
                    outcomes.add(new Outcome<>(null, ex.getCause()));
                }
            }
            return outcomes;
        }
        finally
        {
            pool.shutdownNow();
        }
    }

    /** Runs the task and returns every rank's value, failing the test if any rank failed. */
    static <T> List<T> values(final List<Communicator> comms, final RankTask<T> task) throws Exception
    {
        final List<T> values = new ArrayList<>();
        for (final Outcome<T> o : each(comms, task))
        {
            values.add(o.get());
        }
        return values;
    }
}
