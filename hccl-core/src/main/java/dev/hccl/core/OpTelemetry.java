package dev.hccl.core;

import dev.hccl.api.CommMetrics;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.core.events.CollectiveEvent;
import dev.hccl.core.events.FailureEvent;
import dev.hccl.core.events.OperationEvent;
import dev.hccl.core.events.PointToPointEvent;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * What a communicator tells about its operations: its always-on counters ({@link OpMetrics}), and to the JDK's tools a
 * flight-recorder event per collective, per send and receive, and one for its failure ({@link dev.hccl.core.events}).
 * With no recording running, an event's {@code shouldCommit} is false and nothing else is done for it (the JIT removes
 * the event object).
 */
final class OpTelemetry
{
    private final String commId;
    private final int rank;
    private final int worldSize;
    private final String transport;
    private final Supplier<String> algorithm;
    private final OpMetrics metrics = new OpMetrics();
    private final AtomicBoolean failureRecorded = new AtomicBoolean();
    /** Set for the warm-up's twin communicator, whose thousands of tiny operations are init's, not the job's. */
    private volatile boolean muted;

    /**
     * @param commId    the communicator's id.
     * @param rank      this rank.
     * @param worldSize the communicator's ranks.
     * @param transport the transports its links use.
     * @param algorithm the algorithm of the collective that ran last on the calling thread's stream.
     */
    OpTelemetry(final long commId, final int rank, final int worldSize, final String transport,
        final Supplier<String> algorithm)
    {
        this.commId = Long.toHexString(commId);
        this.rank = rank;
        this.worldSize = worldSize;
        this.transport = transport;
        this.algorithm = algorithm;
    }

    /** From now on, records and counts no operation (a failure is still recorded). */
    void mute()
    {
        muted = true;
    }

    /**
     * A collective ended; {@code event} was begun as it started.
     *
     * @param event   its event.
     * @param desc    what it was.
     * @param seq     its sequence number.
     * @param ctx     its context, which counted its waits; null when it failed before running.
     * @param started when it started ({@link System#nanoTime()}).
     * @param failed  whether it failed.
     */
    void collectiveEnded(final CollectiveEvent event, final OpDescriptor desc, final long seq, final OpContext ctx,
        final long started, final boolean failed)
    {
        final long bytes = bytes(desc);
        final long wait = ctx == null ? 0 : ctx.peerWaitNanos();
        if (!muted)
        {
            metrics.collective(desc.operation(), bytes, System.nanoTime() - started, wait, failed);
        }
        if (event.shouldCommit() && !muted)
        {
            fill(event, desc, seq, failed);
            event.dataType = desc.dataType() == null ? "" : desc.dataType().name();
            event.reduction = desc.reduceOp() == null ? "" : desc.reduceOp().name();
            event.root = desc.root();
            event.bytes = bytes;
            event.algorithm = ctx == null ? "" : algorithm.get();
            event.peerWait = wait;
            event.commit();
        }
    }

    /**
     * A send or receive completed, or failed.
     *
     * @param event   its event, begun as its transfers were posted.
     * @param desc    what it was.
     * @param seq     its sequence number.
     * @param ctx     its context, which counted its waits.
     * @param posted  when its transfers were posted ({@link System#nanoTime()}).
     * @param failed  whether it failed.
     */
    void pointToPointEnded(final PointToPointEvent event, final OpDescriptor desc, final long seq, final OpContext ctx,
        final long posted, final boolean failed)
    {
        final long bytes = bytes(desc);
        if (!muted)
        {
            metrics.pointToPoint(desc.operation(), bytes, System.nanoTime() - posted, ctx.peerWaitNanos(), failed);
        }
        if (event.shouldCommit() && !muted)
        {
            fill(event, desc, seq, failed);
            event.peer = desc.root();
            event.dataType = desc.dataType() == null ? "" : desc.dataType().name();
            event.bytes = bytes;
            event.commit();
        }
    }

    /** A wait was reported as stalled ({@link Watchdog}). */
    void stalled()
    {
        metrics.stalled();
    }

    /**
     * The counters now.
     *
     * @param commId  the communicator's id.
     * @param failure its failure, or null.
     * @return them.
     */
    CommMetrics metrics(final long commId, final HcclException failure)
    {
        return metrics.snapshot(commId, rank, worldSize, failure);
    }

    /**
     * An operation's size as nccl-tests' size column counts it: the whole output of an all-gather, the whole input
     * of a reduce-scatter or all-to-all, else the buffer; 0 for the V collectives, whose sizes differ by rank.
     */
    private long bytes(final OpDescriptor desc)
    {
        if (!desc.hasCount())
        {
            return 0;
        }
        final long buffer = desc.count() * desc.dataType().size();
        switch (desc.operation())
        {
            case ALL_GATHER:
            case REDUCE_SCATTER:
            case ALL_TO_ALL:
                return buffer * worldSize;
            default:
                return buffer;
        }
    }

    /**
     * The communicator failed: recorded once, the first failure.
     *
     * @param failure the communicator's failure.
     * @param relayed whether it passes on another rank's own.
     */
    void failed(final HcclException failure, final boolean relayed)
    {
        final FailureEvent event = new FailureEvent();
        if (event.isEnabled() && failureRecorded.compareAndSet(false, true))
        {
            event.communicator = commId;
            event.rank = rank;
            event.code = failure.errorCode().name();
            event.peer = failure.peer();
            event.operation = failure.operation() == null ? "" : failure.operation().displayName();
            event.sequence = failure.sequence();
            event.relayed = relayed;
            event.message = failure.getMessage();
            final Throwable cause = failure.getCause();
            event.cause = cause == null ? "" : cause.toString();
            event.commit();
        }
    }

    private void fill(final OperationEvent event, final OpDescriptor desc, final long seq, final boolean failed)
    {
        event.communicator = commId;
        event.rank = rank;
        event.worldSize = worldSize;
        event.sequence = seq;
        event.operation = desc.operation().displayName();
        event.count = desc.hasCount() ? desc.count() : 0;
        event.transport = transport;
        event.failed = failed;
    }
}
