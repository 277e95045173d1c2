package dev.hccl.core.op;

import dev.hccl.api.CommFuture;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The future of one operation: completed by the execution stream.
 */
final class OpFuture implements CommFuture
{
    private static final AtomicInteger COMPLETION_THREADS = new AtomicInteger();
    /**
     * Where a future handed out by {@link #toCompletableFuture()} is completed, and so where the user's dependent
     * actions run: daemon threads of ours, one per completion under way, each kept a minute for the next. Not the
     * execution stream, since a dependent action may issue a blocking collective on the same communicator; and not the
     * JDK's default: newer JDKs (25) run it on the common pool even where that has one worker (two cores), and the
     * dependents of two ranks of one JVM that each issue a collective would then wait there for each other forever, as
     * would a dependent behind the application's own tasks on a busy common pool. As many threads as dependents wait
     * at once: they are the application's, which JDK 17's own executor (a thread per task) does not bound either.
     */
    private static final Executor COMPLETIONS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
        new SynchronousQueue<>(), OpFuture::completionThread);

    private final CompletableFuture<Void> result = new CompletableFuture<>();

    /** The user's code runs there, so it is not placed as the library's threads are ({@code HCCL_LIBRARY_CPUS}). */
    private static Thread completionThread(final Runnable task)
    {
        final Thread t = new Thread(task, "hccl-future-" + COMPLETION_THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    }

    void complete()
    {
        result.complete(null);
    }

    void fail(final HcclException cause)
    {
        result.completeExceptionally(cause);
    }

    @Override
    public void join()
    {
        try
        {
            result.join();
        }
        catch (final CompletionException ex)
        {
            throw rethrow(ex.getCause());
        }
    }

    @Override
    public CompletableFuture<Void> toCompletableFuture()
    {
        final CompletableFuture<Void> mirror = new CompletableFuture<>();
        result.whenCompleteAsync((done, failure) -> settle(mirror, failure), COMPLETIONS);
        return mirror;
    }

    /**
     * Completes a future handed to the user as its operation completed: with the operation's own exception.
     *
     * @param mirror  the user's future.
     * @param failure the operation's failure, possibly wrapped by {@link CompletableFuture}; null when it succeeded.
     */
    static void settle(final CompletableFuture<Void> mirror, final Throwable failure)
    {
        if (failure == null)
        {
            mirror.complete(null);
        }
        else
        {
            mirror.completeExceptionally(failure instanceof CompletionException && failure.getCause() != null ?
                failure.getCause() : failure);
        }
    }

    @Override
    public Void get(final long timeout, final TimeUnit unit) throws TimeoutException
    {
        await(result, timeout, unit);
        return null;
    }

    /**
     * Waits for a completion with a timeout, restating its failure as {@link #join()} does.
     *
     * @throws TimeoutException when the timeout passed first.
     */
    static void await(final CompletableFuture<Void> completion, final long timeout, final TimeUnit unit)
        throws TimeoutException
    {
        try
        {
            completion.get(timeout, unit);
        }
        catch (final ExecutionException ex)
        {
            throw rethrow(ex.getCause());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new HcclException(ErrorCode.E_INTERNAL, "interrupted while waiting for an operation", ex);
        }
    }

    @Override
    public boolean isDone()
    {
        return result.isDone();
    }

    /**
     * A new exception per waiter, so that its stack shows where the caller waited; the operation's failure is its
     * cause.
     */
    static RuntimeException rethrow(final Throwable cause)
    {
        if (cause instanceof HcclException)
        {
            final HcclException h = (HcclException)cause;
            return new HcclException(h.errorCode(), h.rank(), h.peer(), h.operation(), h.sequence(), h.detail(), h);
        }
        if (cause instanceof RuntimeException)
        {
            return (RuntimeException)cause;
        }
        return new HcclException(ErrorCode.E_INTERNAL, String.valueOf(cause), cause);
    }
}
