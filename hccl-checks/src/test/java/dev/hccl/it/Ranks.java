package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommConfigBuilder;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.transport.shm.ShmTransportProvider;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs one function per rank, each on its own thread, as ranks of a job run in their own processes.
 */
final class Ranks
{
    private Ranks()
    {
    }

    interface RankTask<T>
    {
        T run(int rank) throws Exception;
    }

    /**
     * The first failure, with every other rank's that has ended as suppressed: a rank that waited for a peer reports
     * first, and the peer's own failure must not be lost.
     */
    private static <T> Exception withTheOtherRanksFailures(
        final ExecutionException first, final List<Future<T>> futures)
    {
        final Exception thrown = first.getCause() instanceof Exception ? (Exception)first.getCause() : first;
        for (int r = 0; r < futures.size(); r++)
        {
            final Future<T> f = futures.get(r);
            if (f.isDone() && !f.isCancelled())
            {
                try
                {
                    f.get();
                }
                catch (final ExecutionException other)
                {
                    if (other.getCause() != thrown)
                    {
                        final AssertionError said = new AssertionError("rank " + r + " failed too", other.getCause());
                        thrown.addSuppressed(said);
                    }
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
        }
        return thrown;
    }

    /**
     * Runs {@code task} for ranks 0 to n-1 at once and returns their results; the first failure is rethrown, with the
     * other ranks' as suppressed.
     */
    static <T> List<T> run(final int n, final long timeoutSeconds, final RankTask<T> task) throws Exception
    {
        final ExecutorService pool = Executors.newFixedThreadPool(n, r ->
        {
            final Thread t = new Thread(r, "test-rank");
            t.setDaemon(true);
            return t;
        });
        try
        {
            final List<Future<T>> futures = new ArrayList<>();
            for (int r = 0; r < n; r++)
            {
                final int rank = r;
                futures.add(pool.submit(() -> task.run(rank)));
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            final List<T> results = new ArrayList<>();
            for (final Future<T> f : futures)
            {
                try
                {
                    results.add(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                }
                catch (final ExecutionException ex)
                {
                    throw withTheOtherRanksFailures(ex, futures);
                }
                catch (final TimeoutException ex)
                {
                    throw new AssertionError("ranks did not finish within " + timeoutSeconds + " s", ex);
                }
            }
            return results;
        }
        finally
        {
            pool.shutdownNow();
        }
    }

    /**
     * Runs {@code task} on every communicator of a cluster at once.
     */
    static <T> List<T> onEach(final List<Communicator> comms, final long timeoutSeconds,
        final java.util.function.Function<Communicator, T> task) throws Exception
    {
        return run(comms.size(), timeoutSeconds, rank -> task.apply(comms.get(rank)));
    }

    static void closeAll(final List<Communicator> comms) throws Exception
    {
        run(comms.size(), 60, rank ->
        {
            comms.get(rank).close();
            return null;
        });
    }

    /**
     * Waits until a thread runs a method, as its stack shows.
     *
     * @param t         the thread.
     * @param className the method's class.
     * @param method    the method's name.
     * @throws InterruptedException when interrupted.
     * @throws AssertionError       when it has not within 30 s.
     */
    static void awaitFrame(final Thread t, final String className, final String method) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline)
        {
            for (final StackTraceElement frame : t.getStackTrace())
            {
                if (frame.getClassName().equals(className) && frame.getMethodName().equals(method))
                {
                    return;
                }
            }
            Thread.sleep(1);
        }
        throw new AssertionError(t.getName() + " never ran " + className + "." + method);
    }

    static IntFunction<int[]> ints(final int... values)
    {
        return ignored -> values;
    }

    /**
     * Asserts that {@code Hccl.init} fails on every one of {@code n} ranks with {@code E_PARA} and {@code words}: a
     * setting the ranks must agree on differs, and no rank may get as far as a collective.
     *
     * @param n      ranks.
     * @param config each rank's configuration.
     * @param words  what every rank's message must contain.
     */
    static void assertInitFailsOnEveryRank(final int n, final IntFunction<CommConfig> config, final String words)
        throws Exception
    {
        final List<Throwable> outcomes = run(n, 120, rank ->
        {
            try (Communicator comm = Hccl.init(config.apply(rank)))
            {
                comm.barrier(); // only if init wrongly succeeded: the assertions below then fail
                return null;
            }
            catch (final HcclException ex)
            {
                return ex;
            }
        });
        for (int rank = 0; rank < n; rank++)
        {
            final HcclException ex = assertInstanceOf(HcclException.class, outcomes.get(rank), "rank " + rank);
            assertEquals(ErrorCode.E_PARA, ex.errorCode(), ex.getMessage());
            assertTrue(ex.getMessage().contains(words), "rank " + rank + ": " + ex.getMessage());
        }
    }

    /**
     * A rank of a job of threads with a real rendezvous on loopback: no environment, shared memory or TCP between
     * the ranks, and timeouts that a busy machine meets.
     *
     * @param rank the rank.
     * @param n    ranks.
     * @param port the rendezvous port.
     * @param tcp  TCP between the ranks instead of shared memory.
     * @return the builder, for more settings.
     */
    static CommConfigBuilder onLoopback(final int rank, final int n, final int port, final boolean tcp)
    {
        return CommConfig.builder().environment(Map.of())
            .set(ShmTransportProvider.DISABLE, tcp)
            .rank(rank).worldSize(n).masterAddr("127.0.0.1").masterPort(port)
            .connectTimeout(Duration.ofSeconds(60))
            .execTimeout(Duration.ofSeconds(120));
    }
}
