package dev.hccl.core.op;

import dev.hccl.api.CommFuture;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The future of one operation: completed by the execution stream.
 */
final class OpFuture implements CommFuture
{
    private final CompletableFuture<Void> result = new CompletableFuture<>();
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
        // The JDK's default asynchronous executor: the common pool, or a thread per task where it has no parallelism.
        result.whenCompleteAsync((done, failure) -> settle(mirror, failure));
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
