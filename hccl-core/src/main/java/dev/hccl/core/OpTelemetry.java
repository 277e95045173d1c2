package dev.hccl.core;

import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.core.events.CollectiveEvent;
import dev.hccl.core.events.FailureEvent;
import dev.hccl.core.events.OperationEvent;
import dev.hccl.core.events.PointToPointEvent;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * What a communicator tells the JDK's tools about its operations: a flight-recorder event per collective, per send
 * and receive, and one for its failure ({@link dev.hccl.core.events}). With no recording running, an event's
 * {@code isEnabled} is false and nothing else is done (the JIT removes the event object).
 */
final class OpTelemetry
{
    private final String commId;
    private final int rank;
    private final int worldSize;
    private final String transport;
    private final Supplier<String> algorithm;
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

    /** From now on, records no operation (a failure still is). */
    void mute()
    {
        muted = true;
    }

    /**
     * A collective ended; {@code event} was begun as it started.
     *
     * @param event  its event.
     * @param desc   what it was.
     * @param seq    its sequence number.
     * @param ctx    its context, which counted its waits; null when it failed before running.
     * @param failed whether it failed.
     */
    void collectiveEnded(final CollectiveEvent event, final OpDescriptor desc, final long seq, final OpContext ctx,
        final boolean failed)
    {
        if (event.shouldCommit() && !muted)
        {
            fill(event, desc, seq, failed);
            event.dataType = desc.dataType() == null ? "" : desc.dataType().name();
            event.reduction = desc.reduceOp() == null ? "" : desc.reduceOp().name();
            event.root = desc.root();
            event.bytes = desc.hasCount() ? desc.count() * desc.dataType().size() : 0;
            event.algorithm = algorithm.get();
            event.peerWait = ctx == null ? 0 : ctx.peerWaitNanos();
            event.commit();
        }
    }

    /**
     * A send or receive completed, or failed.
     *
     * @param event its event, begun as its transfers were posted.
     * @param desc  what it was.
     * @param seq   its sequence number.
     * @param peer  the other rank.
     * @param failed whether it failed.
     */
    void pointToPointEnded(final PointToPointEvent event, final OpDescriptor desc, final long seq, final int peer,
        final boolean failed)
    {
        if (event.shouldCommit() && !muted)
        {
            fill(event, desc, seq, failed);
            event.peer = peer;
            event.dataType = desc.dataType() == null ? "" : desc.dataType().name();
            event.bytes = desc.hasCount() ? desc.count() * desc.dataType().size() : 0;
            event.commit();
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
