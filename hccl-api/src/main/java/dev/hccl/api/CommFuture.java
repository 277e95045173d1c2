package dev.hccl.api;

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
