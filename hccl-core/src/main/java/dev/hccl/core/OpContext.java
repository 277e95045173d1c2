package dev.hccl.core;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.WaitPolicy;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;

import java.nio.ByteBuffer;

/**
 * The {@link PeerGroup} of one operation: stamps every message with the operation's sequence number and
 * fingerprint, and bounds every wait with the execution timeout.
 */
final class OpContext implements PeerGroup
{
    /** How long a wait for a signal of the node arena lasts before the stall reports hear of it. */
    static final long SIGNAL_REPORT_AFTER_NANOS = 1_000_000;

    private final OperationScope comm;
    private final OpDescriptor desc;
    private final long seq;

    OpContext(final OperationScope comm, final OpDescriptor desc, final long seq)
    {
        this.comm = comm;
        this.desc = desc;
        this.seq = seq;
    }

    @Override
    public int rank()
    {
        return comm.rank();
    }

    @Override
    public int size()
    {
        return comm.worldSize();
    }

    @Override
    public Request send(final int peer, final long tag, final ByteBuffer src, final int offset, final int length)
    {
        final Request request = new Request(peer, true, tag);
        final ByteBuffer payload = src.duplicate();
        payload.clear().position(offset).limit(offset + length);
        comm.wire().send(peer, seq, tag, desc, payload, request);
        return request;
    }

    @Override
    public Request recv(final int peer, final long tag, final ByteBuffer dst, final int offset, final int length)
    {
        return recvReduce(peer, tag, dst, offset, length, null);
    }

    @Override
    public Request recvReduce(
        final int peer, final long tag, final ByteBuffer dst, final int offset, final int length, final Reducer reducer)
    {
        return recvReduce(peer, tag, dst, offset, length, reducer, null, 0);
    }

    @Override
    public Request recvReduce(
        final int peer, final long tag, final ByteBuffer dst, final int offset, final int length, final Reducer reducer,
        final ByteBuffer left, final int leftOffset)
    {
        final Request request = new Request(peer, false, tag);
        comm.wire().post(peer, seq, tag, desc, dst, offset, length, reducer, left, leftOffset, request);
        return request;
    }

    @Override
    public void await(final Request request)
    {
        if (!request.isDone())
        {
            final Whereabouts whereabouts = comm.whereabouts();
            whereabouts.waiting(desc, seq, request.peer(), request);
            final HcclException failed = comm.failures().get();
            if (failed != null)
            {
                request.fail(failed); // failed meanwhile: the wait must not begin
            }
            try
            {
                if (!request.await(System.nanoTime() + comm.execTimeoutNanos(), comm.progressEngine(),
                    comm.waitPolicy()))
                {
                    throw timedOut(request, comm.survey(whereabouts.now(), true));
                }
            }
            finally
            {
                whereabouts.stopped(request);
            }
        }
        final Throwable failure = request.failure();
        if (failure != null)
        {
            // The communicator's own failure passes as it is; a transport's is restated in this operation's terms.
            final HcclException known = comm.failures().get();
            throw comm.failures().failInOperation(failure == known ? known : new HcclException(
                failure instanceof HcclException ? ((HcclException)failure).errorCode() : ErrorCode.E_TCP_TRANSFER,
                comm.rank(), request.peer(), desc.operation(), seq, request + " failed: " +
                (failure instanceof HcclException ? ((HcclException)failure).detail() : failure.toString()), failure));
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * The communicator's node arena when its members are exactly this communicator's ranks (every rank on one node).
     */
    @Override
    public NodeArena arena()
    {
        final NodeArena arena = comm.nodeArena();
        return null != arena && arena.members() == comm.worldSize() ? arena : null;
    }

    @Override
    public void awaitSignal(final int index, final long atLeast, final int writer)
    {
        final NodeArena arena = arena();
        if (null == arena)
        {
            throw new IllegalStateException("rank " + comm.rank() + " has no node arena in " + this);
        }
        if (arena.signal(index) < atLeast)
        {
            awaitSignalWaiting(arena, index, atLeast, writer);
        }
    }

    /**
     * The slow path: waits as the policy says, never longer than a park at a time, since nothing wakes a thread when
     * a signal in shared memory changes; the failure state is read on every turn, so a failed communicator (a peer
     * whose death the transport noticed, an abort) ends the wait within a park. The wait is registered for the stall
     * reports only once it has lasted {@link #SIGNAL_REPORT_AFTER_NANOS}: the usual wait is shorter, and allocates
     * nothing.
     */
    private void awaitSignalWaiting(final NodeArena arena, final int index, final long atLeast, final int writer)
    {
        final Whereabouts whereabouts = comm.whereabouts();
        final WaitPolicy policy = comm.waitPolicy();
        final long start = System.nanoTime();
        final long deadline = start + comm.execTimeoutNanos();
        boolean reported = false;
        try
        {
            long now = start;
            while (arena.signal(index) < atLeast)
            {
                final HcclException failed = comm.failures().get();
                if (null != failed)
                {
                    throw comm.failures().failInOperation(failed);
                }
                final long left = deadline - now;
                if (left <= 0)
                {
                    throw signalTimedOut(writer, index, atLeast, comm.survey(whereabouts.now(), false));
                }
                if (!reported && now - start >= SIGNAL_REPORT_AFTER_NANOS)
                {
                    reported = true;
                    whereabouts.waiting(desc, seq, writer, "rank " + writer + "'s signal at byte " + index +
                        " of the node arena to reach " + atLeast);
                }
                policy.idle(SignalPark.ENGINE, now - start, left);
                now = System.nanoTime();
            }
        }
        finally
        {
            if (reported)
            {
                whereabouts.stopped();
            }
        }
    }

    private HcclException signalTimedOut(
        final int writer, final int index, final long atLeast, final PositionSurvey.Finding finding)
    {
        final int culprit = finding.culprit() >= 0 ? finding.culprit() : writer;
        return comm.failures().failInOperation(new HcclException(ErrorCode.E_TIMEOUT, comm.rank(), culprit,
            desc.operation(), seq,
            "waited " + comm.execTimeoutNanos() / 1e9 + " s (HCCL_EXEC_TIMEOUT) for rank " + writer + "'s signal " +
            "at byte " + index + " of the node arena to reach " + atLeast + " in " + desc + "; " +
            (finding.culprit() >= 0 ? "" : "rank " + writer + " may be hung or not issuing the same operations; ") +
            finding.account(), null));
    }

    /** The timeout's error, naming the rank that the peers' positions show at fault (or the one waited for). */
    private HcclException timedOut(final Request request, final PositionSurvey.Finding finding)
    {
        final int culprit = finding.culprit() >= 0 ? finding.culprit() : request.peer();
        return comm.failures().failInOperation(new HcclException(ErrorCode.E_TIMEOUT, comm.rank(), culprit,
            desc.operation(), seq,
            "waited " + comm.execTimeoutNanos() / 1e9 + " s (HCCL_EXEC_TIMEOUT) for " + request + " in " + desc +
            "; " + (finding.culprit() >= 0 ? "" : "rank " + request.peer() + " may be hung, dead without closing " +
            "its connection, or not issuing the same operations; ") + finding.account(), null));
    }

    ProgressEngine progressEngine()
    {
        return comm.progressEngine();
    }

    WaitPolicy waitPolicy()
    {
        return comm.waitPolicy();
    }

    @Override
    public RankLayout layout()
    {
        return comm.layout();
    }

    @Override
    public ByteBuffer scratch(final int slot, final int bytes)
    {
        return comm.scratch(slot, bytes);
    }

    @Override
    public int segmentBytes()
    {
        return comm.segmentBytes();
    }

    @Override
    public String toString()
    {
        return desc + " #" + seq;
    }
}
