package dev.hccl.core;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Request;
import dev.hccl.core.events.CollectiveEvent;
import dev.hccl.core.events.PointToPointEvent;
import dev.hccl.core.mailbox.Mailbox;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a communicator's numbered operations, one at a time, on whichever thread runs its stream (the stream's own, or
 * a caller that claimed it): a collective after the point-to-point operations posted before it, checked against its
 * peers' fingerprints by the mailbox, with the transport driven by the running thread; a send or receive posted
 * without waiting. Whatever an operation throws fails the communicator.
 */
final class OpExecutor
{
    private static final Logger LOG = LoggerFactory.getLogger(OpExecutor.class);

    /** A collective's algorithm, run against the communicator's point-to-point primitives. */
    @FunctionalInterface
    interface OpBody
    {
        void run(OpContext ctx);
    }

    /** A send's or a receive's transfers. */
    @FunctionalInterface
    interface PointToPointBody
    {
        /** Posts the operation's transfers without waiting for them. */
        Request[] post(OpContext ctx);
    }

    /**
     * An operation under way, for naming it in faults that come from transport threads.
     *
     * @param desc what it is.
     * @param seq  its sequence number.
     */
    record RunningOp(OpDescriptor desc, long seq)
    {
    }

    private final OperationScope comm;
    private final Mailbox mailbox;
    private final Fabric fabric;
    private final OpTelemetry telemetry;
    /** Touched only by whoever runs the stream's operations (its thread or a claimant), one at a time. */
    private final PostedPointToPoint postedPointToPoint = new PostedPointToPoint();
    private volatile RunningOp running;

    OpExecutor(final OperationScope comm, final Mailbox mailbox, final Fabric fabric, final OpTelemetry telemetry)
    {
        this.telemetry = telemetry;
        this.comm = comm;
        this.mailbox = mailbox;
        this.fabric = fabric;
    }

    /**
     * The operation under way.
     *
     * @return it, or null when none is.
     */
    RunningOp running()
    {
        return running;
    }

    /** Runs a collective, after the point-to-point operations issued before it. */
    void execute(final OpDescriptor desc, final long seq, final OpBody body, final OpFuture future)
    {
        completePointToPoint();
        final long started = System.nanoTime();
        final CollectiveEvent event = new CollectiveEvent();
        event.begin();
        final HcclException failed = comm.failures().get();
        if (failed != null)
        {
            final HcclException failure = failedEarlier(desc, seq, failed);
            telemetry.collectiveEnded(event, desc, seq, null, started, true);
            future.fail(failure);
            return;
        }
        running = new RunningOp(desc, seq);
        future.started();
        final OpContext ctx = new OpContext(comm, desc, seq);
        try
        {
            mailbox.beginOp(seq, desc);
            // Driving the transport from the start, sends are written by this thread, not handed to another.
            final boolean driving = enterEngine();
            try
            {
                body.run(ctx);
            }
            finally
            {
                exitEngine(driving);
            }
            final String leftover = mailbox.endOp(seq);
            if (leftover != null)
            {
                throw new HcclException(ErrorCode.E_MISMATCH, comm.rank(), HcclException.UNKNOWN_RANK,
                    desc.operation(), seq, "the ranks disagree on how much " + desc + " moves: " + leftover, null);
            }
            comm.whereabouts().completed(seq);
            telemetry.collectiveEnded(event, desc, seq, ctx, started, false);
            future.complete();
        }
        catch (final RuntimeException | Error ex)
        {
            final HcclException failure = failOn(desc, seq, ex);
            telemetry.collectiveEnded(event, desc, seq, ctx, started, true);
            future.fail(failure);
        }
        finally
        {
            running = null;
        }
    }

    /** Posts a send's or a receive's transfers; the operation completes when they have. */
    void post(final OpDescriptor desc, final long seq, final PointToPointBody body, final PointToPointOp op)
    {
        final HcclException failed = comm.failures().get();
        if (failed != null)
        {
            op.fail(failedEarlier(desc, seq, failed));
            return;
        }
        running = new RunningOp(desc, seq);
        final long started = System.nanoTime();
        final PointToPointEvent event = new PointToPointEvent();
        event.begin();
        try
        {
            final OpContext ctx = new OpContext(comm, desc, seq);
            final Request[] transfers;
            final boolean driving = enterEngine();
            try
            {
                transfers = body.post(ctx);
            }
            finally
            {
                exitEngine(driving);
            }
            op.posted(ctx, transfers, new PointToPointOp.Observed(event, telemetry, desc, seq, started));
            postedPointToPoint.add(op);
        }
        catch (final RuntimeException | Error ex)
        {
            op.fail(failOn(desc, seq, ex));
        }
        finally
        {
            running = null;
        }
    }

    /** Waits for the point-to-point operations posted so far, as a stream would before its next operation. */
    void completePointToPoint()
    {
        postedPointToPoint.completeAll((op, ex) ->
            LOG.debug("rank {}: {} failed: {}", comm.rank(), op, ex.getMessage()));
    }

    private boolean enterEngine()
    {
        final ProgressEngine engine = fabric.progressEngine();
        return null != engine && engine.enter();
    }

    private void exitEngine(final boolean driving)
    {
        if (driving)
        {
            fabric.progressEngine().exit();
        }
    }

    private HcclException failedEarlier(final OpDescriptor desc, final long seq, final HcclException failed)
    {
        comm.failures().failInOperation(failed); // carried to this operation's caller
        return new HcclException(failed.errorCode(), comm.rank(), failed.peer(), desc.operation(), seq,
            "the communicator failed earlier: " + failed.getMessage(), failed);
    }

    /** Fails the communicator with what an operation threw: a wire failure as it is, anything else as a bug. */
    private HcclException failOn(final OpDescriptor desc, final long seq, final Throwable thrown)
    {
        return comm.failures().failInOperation(thrown instanceof HcclException ? (HcclException)thrown :
            new HcclException(ErrorCode.E_INTERNAL, comm.rank(), HcclException.UNKNOWN_RANK, desc.operation(), seq,
            "internal error in " + desc + ": " + thrown, thrown));
    }
}
