package dev.hccl.api.spi;

import java.util.concurrent.locks.LockSupport;

/**
 * One point-to-point transfer in flight: a send that completes when its buffer may be reused, or a receive that
 * completes when its destination holds the data. Completed once, by a transport or I/O thread; awaited by one thread.
 */
public final class Request
{
    /** How a waiter that passes no policy waits: as one with a core to itself. */
    private static final WaitPolicy DEFAULT_POLICY = BackoffWait.forNode(1, 1);
    /** How often a waiter whose transfers another thread drives checks whether it should drive them itself. */
    private static final long DRIVE_RETRY_NANOS = 1_000_000;

    private final int peer;
    private final boolean send;
    private final long tag;
    private volatile Thread waiter;
    private volatile boolean done;
    private volatile Throwable failure;
    /** An interrupt taken off the waiting thread during a wait, set again when the wait returns; the waiter's alone. */
    private boolean interruptHeld;

    /**
     * A transfer with a peer.
     *
     * @param peer the peer's rank in the communicator.
     * @param send true for a send, false for a receive.
     * @param tag  the transfer's tag within its operation.
     */
    public Request(final int peer, final boolean send, final long tag)
    {
        this.peer = peer;
        this.send = send;
        this.tag = tag;
    }

    /**
     * The peer's rank.
     *
     * @return the rank in the communicator.
     */
    public int peer()
    {
        return peer;
    }

    /**
     * Whether this is a send.
     *
     * @return true for a send, false for a receive.
     */
    public boolean isSend()
    {
        return send;
    }

    /**
     * The tag.
     *
     * @return the tag within the operation.
     */
    public long tag()
    {
        return tag;
    }

    /**
     * Whether the transfer has finished, well or not.
     *
     * @return true once completed or failed.
     */
    public boolean isDone()
    {
        return done;
    }

    /**
     * Why the transfer failed.
     *
     * @return the cause, or null while pending or when it succeeded.
     */
    public Throwable failure()
    {
        return failure;
    }

    /**
     * Marks the transfer finished. Later calls of this or {@link #fail} are ignored.
     */
    public void complete()
    {
        finish(null);
    }

    /**
     * Marks the transfer failed. Later calls of this or {@link #complete} are ignored.
     *
     * @param cause why.
     */
    public void fail(final Throwable cause)
    {
        finish(cause);
    }

    private void finish(final Throwable cause)
    {
        synchronized (this)
        {
            if (done)
            {
                return;
            }
            failure = cause;
            done = true;
        }
        final Thread w = waiter;
        if (w != null)
        {
            LockSupport.unpark(w);
        }
    }

    /**
     * Waits until the transfer finishes or the deadline passes, as {@link BackoffWait} waits for a completion that
     * another thread makes: spins briefly, then yields its core for about a loopback round trip (so that this
     * process's I/O thread, which completes the transfer, can run on it without a wake-up), then parks.
     * <p>
     * Not interruptible, as {@code CompletableFuture.join()} is not: an interrupt neither ends the wait nor is lost;
     * the thread's interrupt status is set again when this returns. A transfer abandoned half-way would leave the
     * peers' operation without its data, and a status kept during the wait would make every park return at once.
     *
     * @param deadlineNanos a {@link System#nanoTime()} value.
     * @return true when finished, false when the deadline passed first.
     */
    public boolean await(final long deadlineNanos)
    {
        return await(deadlineNanos, null, DEFAULT_POLICY);
    }

    /**
     * Waits, as {@code policy} says with no engine to drive, until another thread completes the transfer (which
     * unparks this one) or the deadline passes; the interrupt status is held aside, not set again.
     */
    private void awaitCompletion(final long deadlineNanos, final WaitPolicy policy)
    {
        waiter = Thread.currentThread();
        try
        {
            final long start = System.nanoTime();
            long now = start;
            while (!done)
            {
                final long left = deadlineNanos - now;
                if (left <= 0)
                {
                    return;
                }
                holdInterrupt(); // a park returns at once on an interrupted thread
                policy.idle(null, now - start, left);
                now = System.nanoTime();
            }
        }
        finally
        {
            waiter = null;
        }
    }

    /**
     * Waits until the transfer finishes or the deadline passes, performing the transport's I/O meanwhile when no
     * other thread does: polls while messages come and waits between polls as {@code policy} says (spin, yield, or
     * sleep in the engine until I/O comes). While another thread drives, waits as {@link #await(long)} does and comes
     * back to drive if that thread stops first. Not interruptible either, as {@link #await(long)}; but Netty's NIO
     * selector, where the native epoll transport is not available, clears an interrupt that wakes it, so there an
     * interrupt that comes while this thread sleeps in the selector is lost.
     *
     * @param deadlineNanos a {@link System#nanoTime()} value.
     * @param engine        the transports' engine, or null when they complete transfers on threads of their own.
     * @param policy        how to wait while nothing is ready.
     * @return true when finished, false when the deadline passed first.
     */
    public boolean await(final long deadlineNanos, final ProgressEngine engine, final WaitPolicy policy)
    {
        // Held aside for the whole wait: a selector, like a park, returns at once on an interrupted thread.
        holdInterrupt();
        try
        {
            if (null == engine)
            {
                awaitCompletion(deadlineNanos, policy);
                return done;
            }
            while (!done)
            {
                if (engine.enter())
                {
                    try
                    {
                        drive(deadlineNanos, engine, policy);
                        return done;
                    }
                    finally
                    {
                        engine.exit();
                    }
                }
                // An engine may give up entering because of an interrupt that came meanwhile.
                holdInterrupt();
                final long now = System.nanoTime();
                if (now - deadlineNanos >= 0)
                {
                    return false;
                }
                awaitCompletion(Math.min(deadlineNanos, now + DRIVE_RETRY_NANOS), policy);
            }
            return true;
        }
        finally
        {
            restoreInterrupt();
        }
    }

    /** Takes the thread's interrupt status off it, remembering it for {@link #restoreInterrupt()}. */
    private void holdInterrupt()
    {
        if (Thread.interrupted())
        {
            interruptHeld = true;
        }
    }

    private void restoreInterrupt()
    {
        if (interruptHeld)
        {
            interruptHeld = false;
            Thread.currentThread().interrupt();
        }
    }

    /** Drives until done or the deadline, holding aside any interrupt that comes meanwhile. */
    private void drive(final long deadlineNanos, final ProgressEngine engine, final WaitPolicy policy)
    {
        long idleSince = System.nanoTime();
        while (!done)
        {
            if (engine.poll(0) > 0)
            {
                idleSince = System.nanoTime();
                continue;
            }
            final long now = System.nanoTime();
            final long left = deadlineNanos - now;
            if (left <= 0)
            {
                return;
            }
            policy.idle(engine, now - idleSince, left);
            holdInterrupt();
        }
    }

    @Override
    public String toString()
    {
        return (send ? "send to rank " : "recv from rank ") + peer + " tag " + Tags.describe(tag);
    }
}
