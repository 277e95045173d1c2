package dev.hccl.api.spi;

import java.util.concurrent.locks.LockSupport;

/**
 * One point-to-point transfer in flight: a send that completes when its buffer may be reused, or a receive that
 * completes when its destination holds the data. Completed once, by a transport or I/O thread; awaited by one thread.
 */
public final class Request
{
    private static final int SPIN_ITERATIONS = 200;
    /** How long a waiter yields its core before parking: a round trip on loopback, give or take. */
    private static final long YIELD_NANOS = 200_000;

    private final int peer;
    private final boolean send;
    private final long tag;
    private volatile Thread waiter;
    private volatile boolean done;
    private volatile Throwable failure;

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
     * Waits until the transfer finishes or the deadline passes, as Agrona's back-off idle strategy does: spins
     * briefly, then yields its core for about a loopback round trip (so that this process's I/O thread, which
     * completes the transfer, can run on it without a wake-up), then parks.
     *
     * @param deadlineNanos a {@link System#nanoTime()} value.
     * @return true when finished, false when the deadline passed first.
     */
    public boolean await(final long deadlineNanos)
    {
        for (int i = 0; i < SPIN_ITERATIONS; i++)
        {
            if (done)
            {
                return true;
            }
            Thread.onSpinWait();
        }
        final long yieldUntil = Math.min(deadlineNanos, System.nanoTime() + YIELD_NANOS);
        while (!done && System.nanoTime() - yieldUntil < 0)
        {
            Thread.yield();
        }
        waiter = Thread.currentThread();
        try
        {
            while (!done)
            {
                final long left = deadlineNanos - System.nanoTime();
                if (left <= 0)
                {
                    return false;
                }
                LockSupport.parkNanos(this, left);
            }
            return true;
        }
        finally
        {
            waiter = null;
        }
    }

    @Override
    public String toString()
    {
        return (send ? "send to rank " : "recv from rank ") + peer + " tag " + Tags.describe(tag);
    }
}
