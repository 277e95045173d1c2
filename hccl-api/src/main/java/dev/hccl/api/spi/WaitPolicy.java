package dev.hccl.api.spi;

/**
 * How a thread that drives a transport waits while nothing is ready, apart from what completes a transfer
 * ({@link Request}), in the manner of Agrona's {@code IdleStrategy}: spin, yield its core, or wait in the engine
 * ({@link ProgressEngine#poll(long)}), which sleeps in the kernel until I/O arrives or parks for a while.
 */
@FunctionalInterface
public interface WaitPolicy
{
    /**
     * Waits a little after a poll found nothing to do.
     *
     * @param engine    the engine being driven; the policy may poll it with a wait.
     * @param idleNanos how long nothing has been ready.
     * @param leftNanos how long until the waiter's deadline; positive.
     */
    void idle(ProgressEngine engine, long idleNanos, long leftNanos);
}
