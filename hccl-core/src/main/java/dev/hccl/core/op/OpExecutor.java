package dev.hccl.core.op;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Request;
import dev.hccl.core.mailbox.Mailbox;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a communicator's numbered operations, one at a time, on whichever thread runs its stream (the stream's own, or
 * a caller that claimed it): a collective after the point-to-point operations posted before it, checked against its
 * peers' fingerprints by the mailbox, with the transport driven by the running thread; a send or receive posted
 * without waiting. Whatever an operation throws fails the communicator. It tells the scope's {@link OpListener} as
 * each operation starts and ends, and names nothing that listens.
 */
public final class OpExecutor
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

    private final OpScope scope;
    private final Mailbox mailbox;
    /** Touched only by whoever runs the stream's operations (its thread or a claimant), one at a time. */
    private final PostedPointToPoint postedPointToPoint = new PostedPointToPoint();
    /** Whether a send or receive was posted since the last wait for them all; touched as postedPointToPoint is. */
    private boolean pointToPointPosted;
    /** Told of each posted send or receive found failed when a collective waits for them: made once, not per call. */
    private final PostedPointToPoint.FailureSink pointToPointFailed;
    /** The operation path's state and observers, from the scope: read on every operation, so kept here. */
    private final CommFailure failures;
    private final OpListener listener;
    private final Whereabouts whereabouts;
    private final ProgressEngine engine;

    /**
     * @param scope   the communicator as its operations see it.
     * @param mailbox its receives, which check each collective's fingerprint.
     */
    public OpExecutor(final OpScope scope, final Mailbox mailbox)
    {
        this.scope = scope;
        this.mailbox = mailbox;
        this.failures = scope.failures();
        this.listener = scope.listener();
        this.whereabouts = scope.whereabouts();
        this.engine = scope.progressEngine();
        this.pointToPointFailed = (op, ex) -> LOG.debug("rank {}: {} failed: {}", scope.rank(), op, ex.getMessage());
    }

    /** Runs a collective, after the point-to-point operations issued before it. */
    void execute(final OpRecord op, final OpBody body, final OpFuture future)
    {
        completePointToPoint();
        final OpDescriptor desc = op.desc();
        final long seq = op.seq();
        final HcclException refused = start(op);
        if (refused != null)
        {
            future.fail(refused);
            return;
        }
        final OpContext ctx = new OpContext(scope, op);
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
                throw new HcclException(ErrorCode.E_MISMATCH, scope.rank(), HcclException.UNKNOWN_RANK,
                    desc.operation(), seq, "the ranks disagree on how much " + desc + " moves: " + leftover, null);
            }
            whereabouts.completed(seq);
            ended(op, ctx, null);
            future.complete();
        }
        catch (final RuntimeException | Error ex)
        {
            final HcclException failure = failOn(desc, seq, ex);
            ended(op, ctx, failure);
            future.fail(failure);
        }
        finally
        {
            whereabouts.running(null);
        }
    }

    /** Posts a send's or a receive's transfers; the operation completes when they have. */
    void post(final OpRecord op, final PointToPointBody body, final PointToPointOp future)
    {
        final HcclException refused = start(op);
        if (refused != null)
        {
            future.fail(refused);
            return;
        }
        try
        {
            final OpContext ctx = new OpContext(scope, op);
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
            future.posted(ctx, transfers);
            postedPointToPoint.add(future);
            pointToPointPosted = true;
        }
        catch (final RuntimeException | Error ex)
        {
            final HcclException failure = failOn(op.desc(), op.seq(), ex);
            ended(op, null, failure);
            future.fail(failure);
        }
        finally
        {
            whereabouts.running(null);
        }
    }

    /** Waits for the point-to-point operations posted so far, as a stream would before its next operation. */
    public void completePointToPoint()
    {
        if (pointToPointPosted)
        {
            postedPointToPoint.completeAll(pointToPointFailed);
            pointToPointPosted = false;
        }
    }

    /**
     * Starts an operation: it is the one running, its record says so and the listener hears of it; unless the
     * communicator failed earlier, which ends the operation at once.
     *
     * @return null when it started, else its failure, for its future.
     */
    private HcclException start(final OpRecord op)
    {
        final HcclException failed = failures.get();
        if (failed != null)
        {
            final HcclException failure = failedEarlier(op.desc(), op.seq(), failed);
            ended(op, null, failure);
            return failure;
        }
        whereabouts.running(op);
        op.started();
        listener.started(op);
        return null;
    }

    /** The operation ended: its record says so, then the listener hears of it, before its future completes. */
    private void ended(final OpRecord op, final OpContext ctx, final HcclException failure)
    {
        op.ended(null == ctx ? 0 : ctx.peerWaitNanos(), failure);
        listener.ended(op);
    }

    private boolean enterEngine()
    {
        return null != engine && engine.enter();
    }

    private void exitEngine(final boolean driving)
    {
        if (driving)
        {
            engine.exit();
        }
    }

    private HcclException failedEarlier(final OpDescriptor desc, final long seq, final HcclException failed)
    {
        failures.failInOperation(failed); // carried to this operation's caller
        return new HcclException(failed.errorCode(), scope.rank(), failed.peer(), desc.operation(), seq,
            "the communicator failed earlier: " + failed.getMessage(), failed);
    }

    /** Fails the communicator with what an operation threw: a wire failure as it is, anything else as a bug. */
    private HcclException failOn(final OpDescriptor desc, final long seq, final Throwable thrown)
    {
        if (thrown instanceof HcclException h)
        {
            return failures.failInOperation(h);
        }
        // A fault in the node arena's memory (the JVM's InternalError for SIGBUS) is the arena's damage, if it has
        // any; else an error of ours.
        final NodeArena arena = scope.nodeArena();
        final String damage = null == arena ? null : arena.damage();
        return failures.failInOperation(null != damage ?
            new HcclException(ErrorCode.E_SHM_SEGMENT, scope.rank(), HcclException.UNKNOWN_RANK, desc.operation(), seq,
                damage, thrown) :
            new HcclException(ErrorCode.E_INTERNAL, scope.rank(), HcclException.UNKNOWN_RANK, desc.operation(), seq,
                "internal error in " + desc + ": " + thrown, thrown));
    }
}
