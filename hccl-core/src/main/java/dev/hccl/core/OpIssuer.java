package dev.hccl.core;

import dev.hccl.api.CommFuture;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;

import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * Issues a communicator's operations: numbers each in its lane (collectives; sends and receives per peer and
 * direction) and hands it to the {@link OpExecutor}, on the execution stream in issue order or on the caller's thread
 * when the stream is idle. Two threads issuing in one lane at once fail the communicator ({@link IssueGuard}): the
 * order of their operations would be decided by a race, differently on each rank.
 */
final class OpIssuer
{
    private final int rank;
    private final CommFailure failures;
    private final OpHistory history;
    private final FlightRecorder recorder;
    private final OpExecutor executor;
    private final ExecutionStream stream;
    private final IssueGuard issueGuard;
    private final Object issueLock = new Object();
    // Guarded by issueLock.
    private long nextSeq;
    private final long[] p2pSendSeq;
    private final long[] p2pRecvSeq;
    private boolean closed;

    OpIssuer(
        final int rank, final CommFailure failures, final OpHistory history, final FlightRecorder recorder,
        final OpExecutor executor, final ExecutionStream stream, final int worldSize)
    {
        this.rank = rank;
        this.failures = failures;
        this.history = history;
        this.recorder = recorder;
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
            final long seq = nextSeq++;
            history.record(seq, desc);
            future.trace(recorder.issued(FlightRecorder.Lane.COLLECTIVE, -1, seq, desc, future));
            return seq;
        }, seq -> executor.execute(desc, seq, body, future));
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
                final long seq = send ? p2pSendSeq[peer]++ : p2pRecvSeq[peer]++;
                op.trace(recorder.issued(send ? FlightRecorder.Lane.SEND : FlightRecorder.Lane.RECV, peer, seq, desc,
                    op));
                return seq;
            }, seq -> executor.post(desc, seq, body, op));
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
                " issued " + desc + " while " + IssueGuard.Holder.name(other.thread) + " was issuing " + other.desc +
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
     * Stops issuing: later calls fail with {@link IllegalStateException}.
     *
     * @return false when it had stopped already.
     */
    /**
     * @return whether {@link #close()} has been called.
     */
    boolean isClosed()
    {
        synchronized (issueLock)
        {
            return closed;
        }
    }

    boolean close()
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
     * @param nextSeq the lane's counter, read and advanced under the issue lock.
     * @param run     runs the operation numbered {@code seq}.
     */
    private <F extends CommFuture> F issue(
        final int lane, final OpDescriptor desc, final boolean blocking, final boolean claimWhenAsync, final F future,
        final LongSupplier nextSeq, final LongConsumer run)
    {
        enter(lane, desc);
        try
        {
            final long seq;
            final boolean claimed;
            synchronized (issueLock)
            {
                if (closed)
                {
                    throw new IllegalStateException(
                        "communicator of rank " + rank + " is closed; cannot run " + desc);
                }
                seq = nextSeq.getAsLong();
                claimed = (blocking || claimWhenAsync) && stream.tryClaim();
                if (!claimed)
                {
                    stream.execute(() -> run.accept(seq));
                }
            }
            if (claimed)
            {
                // Operations issued meanwhile queue behind this one, as they would behind one the stream runs.
                try
                {
                    run.accept(seq);
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
