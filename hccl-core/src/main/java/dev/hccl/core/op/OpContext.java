package dev.hccl.core.op;

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

    private final OpScope scope;
    private final OpRecord op;
    private final OpDescriptor desc;
    private final long seq;
    /** Time spent in waits for peers so far, by the thread that runs the operation. */
    private long peerWaitNanos;

    OpContext(final OpScope scope, final OpRecord op)
    {
        this.scope = scope;
        this.op = op;
        this.desc = op.desc();
        this.seq = op.seq();
    }

    /** The selector chose the algorithm that runs this operation. */
    void chose(final String algorithm)
    {
        op.chose(algorithm);
    }

    /** A send or receive ended, its transfers done or failed: its record says so and the listener hears of it. */
    void ended(final HcclException failure)
    {
        op.ended(peerWaitNanos, failure);
        scope.listener().ended(op);
    }

    @Override
    public int rank()
    {
        return scope.rank();
    }

    @Override
    public int size()
    {
        return scope.worldSize();
    }

    @Override
    public Request send(final int peer, final long tag, final ByteBuffer src, final int offset, final int length)
    {
        final Request request = new Request(peer, true, tag);
        final ByteBuffer payload = src.duplicate();
        payload.clear().position(offset).limit(offset + length);
        scope.wire().send(peer, seq, tag, desc, payload, request);
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
        scope.wire().post(peer, seq, tag, desc, dst, offset, length, reducer, left, leftOffset, request);
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
            final Whereabouts whereabouts = scope.whereabouts();
            final long start = System.nanoTime();
            whereabouts.waiting(desc, seq, request.peer(), request);
            final HcclException failed = scope.failures().get();
            if (failed != null)
            {
                request.fail(failed); // failed meanwhile: the wait must not begin
            }
            try
            {
                if (!request.await(System.nanoTime() + scope.execTimeoutNanos(), scope.progressEngine(),
                    scope.waitPolicy()))
                {
                    throw timedOut(request, scope.survey().run(whereabouts.now(), true));
                }
            }
            finally
            {
                whereabouts.stopped(request);
                peerWaitNanos += System.nanoTime() - start;
            }
        }
        if (request.failure() != null)
        {
            throw scope.failures().transferFailed(op, request);
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
        return scope.nodeArena();
    }

    @Override
    public void awaitSignal(final int index, final long atLeast, final int writer)
    {
        final NodeArena arena = scope.nodeArena();
        if (null == arena)
        {
            throw new IllegalStateException("rank " + scope.rank() + " has no node arena in " + this);
        }
        if (!signalled(arena, index, atLeast) && !signalledSoon(arena, index, atLeast))
        {
            awaitSignalWaiting(arena, index, atLeast, writer);
        }
    }

    /** The failure mark after the signal: a member that posted and then failed must not see its data used. */
    private static boolean signalled(final NodeArena arena, final int index, final long atLeast)
    {
        return arena.signal(index) >= atLeast && arena.failedMember() < 0;
    }

    /**
     * Looks at a signal again a few times, as the wait policy allows ({@link WaitPolicy#quickLooks()}), before the
     * slow path: a peer's signal usually lands within them when every rank has a core. Their time, under a few
     * microseconds, is not counted as waiting for peers.
     */
    private boolean signalledSoon(final NodeArena arena, final int index, final long atLeast)
    {
        for (int looks = scope.waitPolicy().quickLooks(); looks > 0; looks--)
        {
            Thread.onSpinWait();
            if (signalled(arena, index, atLeast))
            {
                return true;
            }
        }
        return false;
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
        final Whereabouts whereabouts = scope.whereabouts();
        final WaitPolicy policy = scope.waitPolicy();
        final ProgressEngine engine = scope.progressEngine();
        // Held aside for the whole wait, as Request.await does: a park returns at once on an interrupted thread.
        boolean interrupted = Thread.interrupted();
        final boolean driving = null != engine && engine.enter();
        final long start = System.nanoTime();
        final long deadline = start + scope.execTimeoutNanos();
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
                final HcclException failed = scope.failures().get();
                if (null != failed)
                {
                    throw scope.failures().failInOperation(failed);
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
                    throw signalTimedOut(writer, index, atLeast, scope.survey().run(whereabouts.now(), driving));
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
        final long issued = scope.wire().issuedBeforeClosing(writer);
        if (issued >= 0 && seq >= issued)
        {
            throw scope.failures().failInOperation(new HcclException(ErrorCode.E_REMOTE, scope.rank(), writer,
                desc.operation(), seq, ClosingRecords.closedWhileWaiting(issued, seq).replace("{peer}",
                "rank " + writer), null));
        }
    }

    /** The failure of a wait that found the arena marked failed by another member whose reason never arrived. */
    private HcclException markedFailed(final int failedRank)
    {
        return scope.failures().failInOperation(new HcclException(ErrorCode.E_REMOTE, scope.rank(), failedRank,
            desc.operation(), seq, "rank " + failedRank + " failed: it marked the node arena failed, and its reason " +
            "did not arrive within " + FAILURE_REASON_WAIT_NANOS / 1_000_000_000 + " s; rank " + failedRank +
            "'s log says what went wrong", null));
    }

    private HcclException signalTimedOut(
        final int writer, final int index, final long atLeast, final PositionSurvey.Finding finding)
    {
        final int culprit = finding.culprit() >= 0 ? finding.culprit() : writer;
        return scope.failures().failInOperation(new HcclException(ErrorCode.E_TIMEOUT, scope.rank(), culprit,
            desc.operation(), seq,
            "waited " + scope.execTimeoutNanos() / 1e9 + " s (HCCL_EXEC_TIMEOUT) for rank " + writer + "'s signal " +
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
        return scope.failures().failInOperation(new HcclException(ErrorCode.E_MISMATCH, scope.rank(), peer,
            desc.operation(), seq, "operation mismatch at #" + seq + ": rank " + peer + " issued " +
            (null == theirs ? "an operation whose fingerprint in the node arena cannot be read" : theirs) +
            " while this rank issued " + desc + "; every rank must issue the same collectives in the same order",
            null));
    }

    /** The timeout's error, naming the rank that the peers' positions show at fault (or the one waited for). */
    private HcclException timedOut(final Request request, final PositionSurvey.Finding finding)
    {
        final int culprit = finding.culprit() >= 0 ? finding.culprit() : request.peer();
        return scope.failures().failInOperation(new HcclException(ErrorCode.E_TIMEOUT, scope.rank(), culprit,
            desc.operation(), seq,
            "waited " + scope.execTimeoutNanos() / 1e9 + " s (HCCL_EXEC_TIMEOUT) for " + request + " in " + desc +
            "; " + (finding.culprit() >= 0 ? "" : "rank " + request.peer() + " may be hung, dead without closing " +
            "its connection, or not issuing the same operations; ") + finding.account(), null));
    }

    ProgressEngine progressEngine()
    {
        return scope.progressEngine();
    }

    WaitPolicy waitPolicy()
    {
        return scope.waitPolicy();
    }

    @Override
    public RankLayout layout()
    {
        return scope.layout();
    }

    @Override
    public ByteBuffer scratch(final int slot, final int bytes)
    {
        return scope.scratch(slot, bytes);
    }

    @Override
    public int segmentBytes()
    {
        return scope.segmentBytes();
    }

    @Override
    public String toString()
    {
        return desc + " #" + seq;
    }
}
