package dev.hccl.api.spi;

/**
 * How a thread waits for a transfer, apart from what completes it ({@link Request}), in the manner of Agrona's
 * {@code IdleStrategy}: spin, yield its core, or wait. A thread that drives the transports waits in their engine
 * ({@link ProgressEngine#poll(long)}), which sleeps in the kernel until I/O arrives or parks for a while; a thread whose
 * transfer another thread completes parks, and is unparked by the completion.
 */
@FunctionalInterface
public interface WaitPolicy
{
    /**
     * Waits a little after a poll found nothing to do.
     *
     * @param engine    the engine being driven, which the policy may poll with a wait; null when another thread
     *                  completes the transfer and unparks this one, so that the policy may park.
     * @param idleNanos how long nothing has been ready.
     * @param leftNanos how long until the waiter's deadline; positive.
     */
    void idle(ProgressEngine engine, long idleNanos, long leftNanos);

    /**
     * How many times a waiter for a signal in shared memory may look at it again, pausing between looks
     * ({@link Thread#onSpinWait()}), before it waits as {@link #idle} says: looks read no clock and poll no transport,
     * so they see a signal that lands within a few of them sooner. Their time is bounded by this count, so none of them
     * checks a deadline; it must stay well under a spin's length. 0 where spinning would take a core from the peer.
     *
     * @return the looks; 0 by default.
     */
    default int quickLooks()
    {
        return 0;
    }
}
