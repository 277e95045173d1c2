package dev.hccl.core;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.WaitPolicy;
import dev.hccl.core.mailbox.ClosingRecords;

import java.nio.ByteBuffer;

/**
 * The {@link PeerGroup} of one operation: stamps every message with the operation's sequence number and
 * fingerprint, and bounds every wait with the execution timeout.
 */
final class OpContext implements PeerGroup
{
    /** How long a wait for a signal of the node arena lasts before the stall reports hear of it. */
    static final long SIGNAL_REPORT_AFTER_NANOS = 1_000_000;
    /**
     * How long a wait that finds the node arena marked failed by another member waits for that member's reason,
     * which follows on its link, before failing without it.
     */
    static final long FAILURE_REASON_WAIT_NANOS = 2_000_000_000L;

    private final OperationScope comm;
    private final OpDescriptor desc;
    private final long seq;
    /** Time spent in waits for peers so far, by the thread that runs the operation. */
    private long peerWaitNanos;

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

    /**
     * @return the time this operation has spent waiting for its peers' transfers and signals.
     */
    long peerWaitNanos()
    {
        return peerWaitNanos;
    }

    @Override
    public void await(final Request request)
    {
        if (!request.isDone())
        {
            final Whereabouts whereabouts = comm.whereabouts();
            final long start = System.nanoTime();
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
                peerWaitNanos += System.nanoTime() - start;
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
     * The communicator's node arena: its members' ranks are the root communicator's, which are this communicator's.
     */
    @Override
    public NodeArena arena()
    {
        return comm.nodeArena();
    }

    @Override
    public void awaitSignal(final int index, final long atLeast, final int writer)
    {
        final NodeArena arena = comm.nodeArena();
        if (null == arena)
        {
            throw new IllegalStateException("rank " + comm.rank() + " has no node arena in " + this);
        }
        // The failure mark after the signal: a member that posted and then failed must not see its data used.
        if (arena.signal(index) < atLeast || arena.failedMember() >= 0)
        {
            awaitSignalWaiting(arena, index, atLeast, writer);
        }
    }

    /**
     * The slow path: waits as the policy says, never longer than a park at a time, since nothing wakes a thread when
     * a signal in shared memory changes. Between looks it polls the transports when this thread may drive them (it
     * usually holds them for its whole operation, so nobody else would read a peer's ABORT, GOODBYE or closing
     * record), and it reads the failure state, so a failed communicator ends the wait within a park. An arena that
     * another member marked failed ends it too, once that member's reason has arrived (or after
     * {@link #FAILURE_REASON_WAIT_NANOS} without it). An interrupt is held aside and restored at the end, so that the
     * parks still park. The wait is
     * registered for the stall reports only once it has lasted {@link #SIGNAL_REPORT_AFTER_NANOS}: the usual wait is
     * shorter, and allocates nothing.
     */
    private void awaitSignalWaiting(final NodeArena arena, final int index, final long atLeast, final int writer)
    {
        final Whereabouts whereabouts = comm.whereabouts();
        final WaitPolicy policy = comm.waitPolicy();
        final ProgressEngine engine = comm.progressEngine();
        // Held aside for the whole wait, as Request.await does: a park returns at once on an interrupted thread.
        boolean interrupted = Thread.interrupted();
        final boolean driving = null != engine && engine.enter();
        final long start = System.nanoTime();
        final long deadline = start + comm.execTimeoutNanos();
        boolean reported = false;
        long markSeen = 0;
        try
        {
            long now = start;
            int markedBy;
            while ((markedBy = arena.failedMember()) >= 0 || arena.signal(index) < atLeast)
            {
                if (driving)
                {
                    engine.poll(0);
                }
                final HcclException failed = comm.failures().get();
                if (null != failed)
                {
                    throw comm.failures().failInOperation(failed);
                }
                if (markedBy >= 0)
                {
                    if (0 == markSeen)
                    {
                        markSeen = now | 1;
                    }
                    else if (now - markSeen >= FAILURE_REASON_WAIT_NANOS)
                    {
                        throw markedFailed(arena.rankOf(markedBy));
                    }
                }
                final long left = deadline - now;
                if (left <= 0)
                {
                    throw signalTimedOut(writer, index, atLeast, comm.survey(whereabouts.now(), driving));
                }
                if (now - start >= SIGNAL_REPORT_AFTER_NANOS)
                {
                    if (!reported)
                    {
                        reported = true;
                        whereabouts.waiting(desc, seq, writer, "rank " + writer + "'s signal at byte " + index +
                            " of the node arena to reach " + atLeast);
                    }
                    closedEarly(writer);
                }
                policy.idle(SignalPark.ENGINE, now - start, left);
                interrupted |= Thread.interrupted();
                now = System.nanoTime();
            }
        }
        finally
        {
            peerWaitNanos += System.nanoTime() - start;
            if (driving)
            {
                engine.exit();
            }
            if (reported)
            {
                whereabouts.stopped();
            }
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Fails the operation when the rank waited for closed its communicator before issuing it: with no receive posted
     * for it, the mailbox cannot tell from its closing record that this wait never ends.
     */
    private void closedEarly(final int writer)
    {
        final long issued = comm.wire().issuedBeforeClosing(writer);
        if (issued >= 0 && seq >= issued)
        {
            throw comm.failures().failInOperation(new HcclException(ErrorCode.E_REMOTE, comm.rank(), writer,
                desc.operation(), seq, ClosingRecords.closedWhileWaiting(issued, seq).replace("{peer}",
                "rank " + writer), null));
        }
    }

    /** The failure of a wait that found the arena marked failed by another member whose reason never arrived. */
    private HcclException markedFailed(final int failedRank)
    {
        return comm.failures().failInOperation(new HcclException(ErrorCode.E_REMOTE, comm.rank(), failedRank,
            desc.operation(), seq, "rank " + failedRank + " failed: it marked the node arena failed, and its reason " +
            "did not arrive within " + FAILURE_REASON_WAIT_NANOS / 1_000_000_000 + " s; rank " + failedRank +
            "'s log says what went wrong", null));
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

    @Override
    public OpDescriptor operation()
    {
        return desc;
    }

    /**
     * {@inheritDoc}
     * <p>
     * In the mailbox's words for the same finding, with this operation's sequence number; the communicator fails.
     */
    @Override
    public HcclException mismatch(final int peer, final OpDescriptor theirs)
    {
        return comm.failures().failInOperation(new HcclException(ErrorCode.E_MISMATCH, comm.rank(), peer,
            desc.operation(), seq, "operation mismatch at #" + seq + ": rank " + peer + " issued " +
            (null == theirs ? "an operation whose fingerprint in the node arena cannot be read" : theirs) +
            " while this rank issued " + desc + "; every rank must issue the same collectives in the same order",
            null));
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
