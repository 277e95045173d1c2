package dev.hccl.core.op;

import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.core.mailbox.Position;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Where this rank is in one communicator: the operation running, the one it waits in, for whom and since when, or the
 * last collective it completed. Written by the threads that run and wait (a few volatile writes per wait), read by
 * peers that ask ({@link PositionSurvey}), by the stall watch and by the failure that names the operation
 * ({@link CommFailure}). When several threads wait at once, the latest is told.
 */
public final class Whereabouts
{
    private static final VarHandle RUNNING;

    static
    {
        try
        {
            RUNNING = MethodHandles.lookup().findVarHandle(Whereabouts.class, "running", OpRecord.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** Written by whoever runs the stream with ordered stores, read by transport threads with getAcquire. */
    @SuppressWarnings("unused")
    private OpRecord running;
    private volatile OpDescriptor desc;
    private volatile long seq;
    private volatile int waitingFor = -1;
    private volatile String awaited;
    private volatile long sinceNanos;
    private volatile long completedSeq = -1;
    private final LongSupplier issued;
    /** The transfers waited for now, failed at once when the communicator fails (abort). */
    private final Set<Request> awaitedRequests =
        ConcurrentHashMap.newKeySet();

    /**
     * @param issued the sequence number of the last collective issued, or -1.
     */
    public Whereabouts(final LongSupplier issued)
    {
        this.issued = issued;
    }

    /**
     * The operation under way, for naming it in faults that come from transport threads.
     *
     * @return it, or null when none is.
     */
    public OpRecord running()
    {
        return (OpRecord)RUNNING.getAcquire(this);
    }

    /**
     * An operation starts running, or (null) none runs any more; by whoever runs the stream.
     *
     * @param op the operation, or null.
     */
    void running(final OpRecord op)
    {
        RUNNING.setRelease(this, op);
    }

    /**
     * A thread of this rank starts waiting.
     *
     * @param desc    the operation.
     * @param seq     its sequence number.
     * @param peer    the rank waited for, in the communicator.
     * @param awaited what it waits for, in words (the transfer).
     */
    void waiting(final OpDescriptor desc, final long seq, final int peer, final Request awaited)
    {
        awaitedRequests.add(awaited);
        waiting(desc, seq, peer, awaited.toString());
    }

    /**
     * A thread of this rank starts waiting for something that is not a transfer (a signal in the node arena); it
     * looks at the failure state itself while it waits.
     *
     * @param desc    the operation.
     * @param seq     its sequence number.
     * @param peer    the rank waited for, in the communicator.
     * @param awaited what it waits for, in words.
     */
    void waiting(final OpDescriptor desc, final long seq, final int peer, final String awaited)
    {
        this.sinceNanos = System.nanoTime();
        this.seq = seq;
        this.awaited = awaited;
        this.waitingFor = peer;
        this.desc = desc; // last: a reader that sees it sees the rest
    }

    /**
     * A wait that {@link #waiting(OpDescriptor, long, int, String)} began is over.
     */
    void stopped()
    {
        desc = null;
        waitingFor = -1;
    }

    /**
     * The wait is over.
     *
     * @param awaited what it waited for.
     */
    void stopped(final Request awaited)
    {
        awaitedRequests.remove(awaited);
        stopped();
    }

    /**
     * A collective completed.
     *
     * @param collectiveSeq its sequence number.
     */
    void completed(final long collectiveSeq)
    {
        completedSeq = Math.max(completedSeq, collectiveSeq);
    }

    /**
     * @return where this rank is now.
     */
    public Position now()
    {
        final OpDescriptor d = desc;
        final long completed = completedSeq;
        if (d == null)
        {
            return new Position(completed, null, -1, -1, issued.getAsLong(), completed);
        }
        return new Position(seq, d, waitingFor, Math.max(0, (System.nanoTime() - sinceNanos) / 1_000_000),
            issued.getAsLong(), completed);
    }

    /**
     * Ends every wait at once: the communicator failed (aborted, say), and a send still queued in a transport would
     * otherwise hold its waiter.
     *
     * @param cause the failure.
     */
    void failWaits(final Throwable cause)
    {
        for (final Request r : awaitedRequests)
        {
            r.fail(cause);
        }
    }

    /**
     * @return what the current wait waits for, in words, or null when none.
     */
    public String awaited()
    {
        return desc == null ? null : awaited;
    }
}
