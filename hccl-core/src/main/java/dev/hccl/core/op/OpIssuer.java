package dev.hccl.core.op;

import dev.hccl.api.CommFuture;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;

import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Issues a communicator's operations: numbers each in its lane (collectives; sends and receives per peer and
 * direction) and hands it to the {@link OpExecutor}, on the execution stream in issue order or on the caller's thread
 * when the stream is idle. Two threads issuing in one lane at once fail the communicator ({@link IssueGuard}): the
 * order of their operations would be decided by a race, differently on each rank.
 */
public final class OpIssuer
{
    private final int rank;
    private final CommFailure failures;
    private final OpHistory history;
    private final OpListener listener;
    private final OpExecutor executor;
    private final ExecutionStream stream;
    private final IssueGuard issueGuard;
    private final Object issueLock = new Object();
    // Guarded by issueLock.
    private long nextSeq;
    private final long[] p2pSendSeq;
    private final long[] p2pRecvSeq;
    private boolean closed;

    /**
     * @param scope    the communicator as its operations see it: its rank and size, failure state and listener.
     * @param history  where the collectives issued are kept, for close to confirm.
     * @param executor what runs them.
     * @param stream   where they queue.
     */
    public OpIssuer(final OpScope scope, final OpHistory history, final OpExecutor executor, final ExecutionStream stream)
    {
        final int worldSize = scope.worldSize();
        this.rank = scope.rank();
        this.failures = scope.failures();
        this.history = history;
        this.listener = scope.listener();
        this.executor = executor;
        this.stream = stream;
        this.issueGuard = new IssueGuard(worldSize);
        this.p2pSendSeq = new long[worldSize];
        this.p2pRecvSeq = new long[worldSize];
    }

    /**
     * Numbers a collective and queues it on the stream, or runs it here when the call blocks and the stream is idle;
     * a blocking call returns once the collective has completed.
     */
    CommFuture collective(final boolean blocking, final OpDescriptor desc, final OpExecutor.OpBody body)
    {
        final OpFuture future = new OpFuture();
        return issue(IssueGuard.COLLECTIVES, desc, blocking, false, future, () ->
        {
            final OpRecord op = new OpRecord(OpRecord.Lane.COLLECTIVE, -1, nextSeq++, desc, future);
            history.record(op.seq(), desc);
            listener.issued(op);
            return op;
        }, op -> executor.execute(op, body, future));
    }

    /**
     * Numbers a send or a receive, per peer and direction, and posts it in issue order: here when the stream is
     * idle, whether the call blocks or not (posting does not wait), else behind what is queued. A blocking call
     * returns once it has completed.
     */
    CommFuture pointToPoint(
        final boolean blocking, final OpDescriptor desc, final int peer, final boolean send,
        final OpExecutor.PointToPointBody body)
    {
        final PointToPointOp op = new PointToPointOp();
        return issue(IssueGuard.pointToPoint(peer, send), desc, blocking, true, op,
            () ->
            {
                final OpRecord record = new OpRecord(send ? OpRecord.Lane.SEND : OpRecord.Lane.RECV, peer,
                    send ? p2pSendSeq[peer]++ : p2pRecvSeq[peer]++, desc, op);
                listener.issued(record);
                return record;
            }, record -> executor.post(record, body, op));
    }

    /**
     * Takes an issue lane for the calling thread, or fails the communicator on every rank when another thread holds
     * it: the order of the two threads' operations was decided by a race. Pair with {@link #exit}.
     */
    void enter(final int lane, final OpDescriptor desc)
    {
        final IssueGuard.Holder other = issueGuard.enter(lane, desc);
        if (other != null)
        {
            throw failures.failInOperation(new HcclException(ErrorCode.E_CONCURRENT, rank, HcclException.UNKNOWN_RANK,
                desc.operation(), HcclException.NO_SEQUENCE, IssueGuard.Holder.name(Thread.currentThread()) +
                " issued " + desc + " while " + IssueGuard.Holder.name(other.thread) + " was issuing " +
                (null == other.desc ? "an operation" : other.desc) +
                " on the same communicator: the order of two threads' operations is decided by a race, differently " +
                "on each rank, which would mix their data. Issue from one thread, or let a thread issue only after " +
                "the other's call has returned (a blocking call issues until it returns)", null));
        }
    }

    /** Gives the lane back. */
    void exit(final int lane)
    {
        issueGuard.exit(lane);
    }

    /**
     * @return whether {@link #close()} has been called.
     */
    public boolean isClosed()
    {
        synchronized (issueLock)
        {
            return closed;
        }
    }

    /**
     * Stops issuing: later calls fail with {@link IllegalStateException}.
     *
     * @return false when it had stopped already.
     */
    public boolean close()
    {
        synchronized (issueLock)
        {
            if (closed)
            {
                return false;
            }
            closed = true;
            return true;
        }
    }

    /**
     * Issues an operation in its lane: takes its sequence number and runs it on the stream, in order, or on this
     * thread when the stream is idle and {@code blocking || claimWhenAsync}.
     *
     * @param number  numbers the operation from its lane's counter, under the issue lock.
     * @param run     runs the operation so numbered.
     */
    private <F extends CommFuture> F issue(
        final int lane, final OpDescriptor desc, final boolean blocking, final boolean claimWhenAsync, final F future,
        final Supplier<OpRecord> number, final Consumer<OpRecord> run)
    {
        enter(lane, desc);
        try
        {
            final OpRecord op;
            final boolean claimed;
            synchronized (issueLock)
            {
                if (closed)
                {
                    throw new IllegalStateException(
                        "communicator of rank " + rank + " is closed; cannot run " + desc);
                }
                op = number.get();
                claimed = (blocking || claimWhenAsync) && stream.tryClaim();
                if (!claimed)
                {
                    stream.execute(() -> run.accept(op));
                }
            }
            if (claimed)
            {
                // Operations issued meanwhile queue behind this one, as they would behind one the stream runs.
                try
                {
                    run.accept(op);
                }
                finally
                {
                    stream.release();
                }
            }
            if (blocking)
            {
                future.join();
            }
            return future;
        }
        finally
        {
            exit(lane);
        }
    }
}
