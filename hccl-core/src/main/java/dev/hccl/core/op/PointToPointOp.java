package dev.hccl.core.op;

import dev.hccl.api.CommFuture;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Request;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A send or a receive: posted in issue order, then in flight on its own, so that point-to-point operations issued one
 * after another make progress together (MPI's {@code Irecv}/{@code Isend} ring) instead of one waiting for the next
 * to start. It completes when its transfers have; whoever waits for it drives them. Waits are taken one thread at a
 * time, since a {@link Request} has one waiter.
 */
final class PointToPointOp implements CommFuture
{
    /** Completes when the transfers are posted, or when the operation failed before they could be. */
    private final CompletableFuture<Void> posting = new CompletableFuture<>();
    private OpContext ctx;
    private Request[] transfers;
    private volatile boolean finished;
    private volatile HcclException failure;
    /** The turn to drive the transfers: a {@link Request} has one waiter. */
    private final ReentrantLock turn = new ReentrantLock();

    /**
     * The transfers are in flight.
     *
     * @param ctx       the operation's context, which bounds and reports each wait.
     * @param transfers its segments.
     */
    void posted(final OpContext ctx, final Request[] transfers)
    {
        this.ctx = ctx;
        this.transfers = transfers;
        posting.complete(null); // publishes both fields to the waiters
    }

    /**
     * The operation failed before its transfers were posted.
     *
     * @param cause why.
     */
    void fail(final HcclException cause)
    {
        failure = cause;
        finished = true;
        posting.complete(null);
    }

    /**
     * Waits for the transfers, driving the transport meanwhile, each wait bounded by {@code HCCL_EXEC_TIMEOUT}.
     *
     * @throws HcclException when a transfer failed or timed out; the communicator has then failed.
     */
    @Override
    public void join()
    {
        posting.join();
        finish(0, false);
    }

    @Override
    public Void get(final long timeout, final TimeUnit unit) throws TimeoutException
    {
        final long deadline = System.nanoTime() + unit.toNanos(timeout);
        OpFuture.await(posting, timeout, unit);
        if (!finish(deadline, true))
        {
            throw new TimeoutException(this + " has not completed in " + timeout + " " + unit);
        }
        return null;
    }

    @Override
    public boolean isDone()
    {
        if (finished)
        {
            return true;
        }
        if (!posting.isDone())
        {
            return false;
        }
        for (final Request r : transfers)
        {
            if (!r.isDone())
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Awaits every transfer; a failure fails the communicator, through {@link OpContext#await}.
     *
     * @param deadlineNanos when {@code bounded}, the caller's own deadline: passing it leaves the operation in flight.
     * @return false when the deadline passed first, true when the operation has completed.
     */
    private boolean finish(final long deadlineNanos, final boolean bounded)
    {
        // One waiter drives the transfers at a time; a bounded wait gives up at its deadline even while another
        // (the thread of toCompletableFuture, say) holds the turn.
        if (!takeTurn(deadlineNanos, bounded))
        {
            return outcome(false);
        }
        try
        {
            return drive(deadlineNanos, bounded);
        }
        finally
        {
            turn.unlock();
        }
    }

    private boolean takeTurn(final long deadlineNanos, final boolean bounded)
    {
        if (!bounded)
        {
            turn.lock();
            return true;
        }
        try
        {
            return turn.tryLock(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Whether the operation completed (throwing its failure), else {@code otherwise}. */
    private boolean outcome(final boolean otherwise)
    {
        if (!finished)
        {
            return otherwise;
        }
        final HcclException failed = failure;
        if (failed != null)
        {
            throw OpFuture.rethrow(failed);
        }
        return true;
    }

    private boolean drive(final long deadlineNanos, final boolean bounded)
    {
        if (!finished)
        {
            try
            {
                for (final Request r : transfers)
                {
                    if (bounded && !r.isDone() &&
                        !r.await(deadlineNanos, ctx.progressEngine(), ctx.waitPolicy()))
                    {
                        return false;
                    }
                    ctx.await(r);
                }
            }
            catch (final HcclException ex)
            {
                failure = ex;
            }
            finished = true;
            ctx.ended(failure);
        }
        return outcome(true);
    }

    @Override
    public String toString()
    {
        final OpContext c = posting.isDone() ? ctx : null;
        return c == null ? "point-to-point operation not yet posted" : c.toString();
    }
}
