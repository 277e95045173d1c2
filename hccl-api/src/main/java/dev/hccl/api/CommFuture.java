package dev.hccl.api;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The pending result of an asynchronous operation. Operations complete in issue order on the communicator's
 * execution stream.
 */
public interface CommFuture extends Future<Void>
{
    /**
     * Waits until the operation completes.
     *
     * @throws HcclException when the operation failed; its cause is the original failure.
     */
    void join();

    /**
     * The operation as a {@link CompletableFuture}, to chain and combine operations with the JDK's own tools
     * ({@code thenRun}, {@code thenCompose}, {@code allOf}, ...). It completes when the operation does, or
     * exceptionally with the operation's {@link HcclException} itself (which {@code join()} and {@code get()} of the
     * returned future wrap in a {@code CompletionException} or an {@code ExecutionException}, as they always do).
     * <p>
     * Each call returns a new future. Completing or cancelling it does not cancel the operation: that runs on, since
     * every rank must execute the same operations. It is never completed from the communicator's own threads, so
     * dependent actions may issue further operations, even blocking ones, on the same communicator: a collective's is
     * completed by daemon threads of the library ({@code hccl-future-<n>}, never the JDK's common pool, where on
     * newer JDKs two ranks' dependents would wait for each other behind its single worker on two cores), and a send's
     * or a receive's (which only a waiting thread drives) by a daemon thread that waits for it, which this default
     * does for any implementation.
     *
     * @return a future that completes with the operation.
     */
    default CompletableFuture<Void> toCompletableFuture()
    {
        final CompletableFuture<Void> mirror = new CompletableFuture<>();
        final Thread waiter = new Thread(() ->
        {
            try
            {
                join();
                mirror.complete(null);
            }
            catch (final RuntimeException ex)
            {
                // join() throws a new exception per waiter, the operation's own as its cause.
                mirror.completeExceptionally(ex instanceof HcclException && ex.getCause() instanceof HcclException ?
                    ex.getCause() : ex);
            }
        }, "hccl-future-waiter");
        waiter.setDaemon(true);
        waiter.start();
        return mirror;
    }

    /**
     * Waits at most the given time for the operation to complete.
     *
     * @param timeout how long to wait.
     * @param unit    the unit of {@code timeout}.
     * @return null.
     * @throws TimeoutException when the operation is still running after the timeout; it goes on running.
     * @throws HcclException    when the operation failed.
     */
    @Override
    Void get(long timeout, TimeUnit unit) throws TimeoutException;

    /**
     * Waits until the operation completes.
     *
     * @return null.
     * @throws HcclException when the operation failed.
     */
    @Override
    default Void get()
    {
        join();
        return null;
    }

    /**
     * Operations on the wire cannot be cancelled: every rank must execute the same operations.
     *
     * @param mayInterruptIfRunning ignored.
     * @return false, always.
     */
    @Override
    default boolean cancel(final boolean mayInterruptIfRunning)
    {
        return false;
    }

    /**
     * Never cancelled.
     *
     * @return false, always.
     */
    @Override
    default boolean isCancelled()
    {
        return false;
    }
}
