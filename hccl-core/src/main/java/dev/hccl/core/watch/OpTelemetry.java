package dev.hccl.core.watch;

import dev.hccl.api.CommMetrics;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.core.events.CollectiveEvent;
import dev.hccl.core.events.FailureEvent;
import dev.hccl.core.events.OperationEvent;
import dev.hccl.core.events.PointToPointEvent;
import dev.hccl.core.events.Recordings;
import dev.hccl.core.op.OpListener;
import dev.hccl.core.op.OpRecord;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a communicator tells about its operations: its always-on counters ({@link OpMetrics}), and to the JDK's tools a
 * flight-recorder event per collective, per send and receive, and one for its failure ({@link dev.hccl.core.events}).
 * It hears of them as the operation path's {@link OpListener}. An operation's event begins as the operation starts and
 * is kept with it ({@link OpRecord#attach}) until it ends, then let go, so that the flight recorder's ring of records
 * holds no events.
 */
public final class OpTelemetry implements OpListener
{

    private final String commId;
    private final int rank;
    private final int worldSize;
    private final String transport;
    private final OpMetrics metrics = new OpMetrics();
    private final AtomicBoolean failureRecorded = new AtomicBoolean();
    /** Set for the warm-up's twin communicator, whose thousands of tiny operations are init's, not the job's. */
    private volatile boolean muted;

    /**
     * @param commId    the communicator's id.
     * @param rank      this rank.
     * @param worldSize the communicator's ranks.
     * @param transport the transports its links use.
     */
    public OpTelemetry(final long commId, final int rank, final int worldSize, final String transport)
    {
        this.commId = Long.toHexString(commId);
        this.rank = rank;
        this.worldSize = worldSize;
        this.transport = transport;
    }

    /** From now on, records and counts no operation (a failure is still recorded). */
    public void mute()
    {
        muted = true;
    }

    @Override
    public void started(final OpRecord op)
    {
        if (muted)
        {
            return;
        }
        // One event an operation, begun here and finished at its end, made only while a recording takes it: an
        // operation under way when a recording starts gets an event of its end alone.
        final boolean collective = op.lane() == OpRecord.Lane.COLLECTIVE;
        if (collective ? collectivesRecorded() : pointToPointRecorded())
        {
            final OperationEvent event = collective ? new CollectiveEvent() : new PointToPointEvent();
            event.begin();
            op.attach(event);
        }
    }

    @Override
    public void ended(final OpRecord op)
    {
        if (muted)
        {
            return;
        }
        final OpDescriptor desc = op.desc();
        final long bytes = bytes(desc);
        final boolean failed = op.failure() != null;
        // One that failed before it started took no time.
        final long took = op.startedNanos() == OpRecord.NOT_YET ? 0 : op.endedNanos() - op.startedNanos();
        final Object begun = op.attachment();
        if (null != begun)
        {
            op.attach(null);
        }
        if (op.lane() == OpRecord.Lane.COLLECTIVE)
        {
            metrics.collective(desc.operation(), bytes, took, op.peerWaitNanos(), failed);
            // Begun only while recorded; none for one that failed before it started, or began before the recording.
            final CollectiveEvent event = null != begun ? (CollectiveEvent)begun :
                collectivesRecorded() ? new CollectiveEvent() : null;
            if (null != event && event.shouldCommit())
            {
                fill(event, op, failed);
                event.dataType = desc.dataType() == null ? "" : desc.dataType().name();
                event.reduction = desc.reduceOp() == null ? "" : desc.reduceOp().name();
                event.root = desc.root();
                event.bytes = bytes;
                event.algorithm = op.algorithm() == null ? "" : op.algorithm();
                event.peerWait = op.peerWaitNanos();
                event.commit();
            }
        }
        else
        {
            metrics.pointToPoint(desc.operation(), bytes, took, op.peerWaitNanos(), failed);
            final PointToPointEvent event = null != begun ? (PointToPointEvent)begun :
                pointToPointRecorded() ? new PointToPointEvent() : null;
            if (null != event && event.shouldCommit())
            {
                fill(event, op, failed);
                event.peer = desc.root();
                event.dataType = desc.dataType() == null ? "" : desc.dataType().name();
                event.bytes = bytes;
                event.commit();
            }
        }
    }

    /** A wait was reported as stalled ({@link Watchdog}). */
    public void stalled()
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
    public CommMetrics metrics(final long commId, final HcclException failure)
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

    /** {@inheritDoc} Recorded once, the first failure, even when muted. */
    @Override
    public void failed(final HcclException failure, final boolean relayed)
    {
        if (!Recordings.started())
        {
            return;
        }
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

    private static boolean collectivesRecorded()
    {
        return Recordings.started() && RecordedProbes.COLLECTIVES.isEnabled();
    }

    private static boolean pointToPointRecorded()
    {
        return Recordings.started() && RecordedProbes.POINT_TO_POINT.isEnabled();
    }

    /**
     * Asked whether a recording takes each kind of event (state of the event's class, not of the instance); made on
     * first use, once the flight recorder has started ({@link Recordings}).
     */
    private static final class RecordedProbes
    {
        static final CollectiveEvent COLLECTIVES = new CollectiveEvent();
        static final PointToPointEvent POINT_TO_POINT = new PointToPointEvent();
    }

    private void fill(final OperationEvent event, final OpRecord op, final boolean failed)
    {
        final OpDescriptor desc = op.desc();
        event.communicator = commId;
        event.rank = rank;
        event.worldSize = worldSize;
        event.sequence = op.seq();
        event.operation = desc.operation().displayName();
        event.count = desc.hasCount() ? desc.count() : 0;
        event.transport = transport;
        event.failed = failed;
    }
}
