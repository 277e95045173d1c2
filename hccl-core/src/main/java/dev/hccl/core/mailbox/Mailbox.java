package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;
import java.util.ArrayList;

/**
 * Matches incoming messages with posted receives for one communicator, by sender, sequence number and tag.
 * <p>
 * A message whose receive is already posted is written straight into its destination by the transport thread; one
 * that comes first waits in a buffer of its own. The mailbox also checks every collective message's fingerprint
 * against the operation this rank runs at that sequence number, so that ranks that issue different collectives fail
 * at once, naming both, instead of hanging or mixing data.
 * <p>
 * Peers are indexed by their rank in the root communicator, so that a mailbox can take messages before its
 * communicator exists (a peer may finish {@code split} first). Thread-safe: one lock guards the queues; payload
 * bytes are moved outside it.
 */
public final class Mailbox
{
    /** Drops a payload: for messages of closed or failed communicators. */
    static final MessageSink DISCARD = new MessageSink()
    {
        @Override
        public void write(final ByteBuffer chunk)
        {
            chunk.position(chunk.limit());
        }

        @Override
        public void complete()
        {
        }
    };

    private static final int RECENT_OPS = 64;

    private final long commId;
    private final ArrayList<PostedRecv>[] posted;
    private final ArrayList<Unexpected>[] unexpected;
    /** Receives matched with a message whose bytes are still arriving: failed too if the communicator fails. */
    private final ArrayList<PostedRecv> inflight = new ArrayList<>();
    private final boolean[] peerGone;
    private final boolean[] peerGoneOrderly;
    private final ErrorCode[] peerGoneCode;
    private final String[] peerGoneReason;
    private long expectedSeq = -1;
    private OpDescriptor expectedDesc;
    /** The last operations, by sequence number modulo the length: a late peer's message names what ran here. */
    private final OpDescriptor[] recent = new OpDescriptor[RECENT_OPS];
    private boolean[] members;
    private FaultListener listener;
    private HcclException failure;
    private final ArrayList<Fault> earlyFaults = new ArrayList<>();

    /**
     * A mailbox for a communicator of the process whose root communicator has {@code rootWorldSize} ranks.
     *
     * @param commId        the communicator.
     * @param rootWorldSize ranks in the root communicator.
     */
    @SuppressWarnings("unchecked")
    public Mailbox(final long commId, final int rootWorldSize)
    {
        this.commId = commId;
        posted = new ArrayList[rootWorldSize];
        unexpected = new ArrayList[rootWorldSize];
        peerGone = new boolean[rootWorldSize];
        peerGoneOrderly = new boolean[rootWorldSize];
        peerGoneCode = new ErrorCode[rootWorldSize];
        peerGoneReason = new String[rootWorldSize];
        for (int i = 0; i < rootWorldSize; i++)
        {
            posted[i] = new ArrayList<>();
            unexpected[i] = new ArrayList<>();
        }
    }

    /**
     * The communicator this mailbox serves.
     *
     * @return its id.
     */
    public long commId()
    {
        return commId;
    }

    /**
     * Binds the mailbox to its communicator: faults are reported to {@code listener} from now on, including any
     * that happened before.
     *
     * @param memberGlobalRanks the communicator's ranks, in the root communicator.
     * @param listener          told of faults.
     */
    public void attach(final int[] memberGlobalRanks, final FaultListener listener)
    {
        final ArrayList<Fault> replay;
        synchronized (this)
        {
            members = new boolean[posted.length];
            for (final int g : memberGlobalRanks)
            {
                members[g] = true;
            }
            this.listener = listener;
            replay = new ArrayList<>(earlyFaults);
            earlyFaults.clear();
            for (int g = 0; g < peerGone.length; g++)
            {
                if (peerGone[g] && members[g] && !peerGoneOrderly[g])
                {
                    replay.add(new Fault(peerGoneCode[g], g, "{peer} " + peerGoneReason[g]));
                }
            }
        }
        for (final Fault fault : replay)
        {
            if (fault.globalPeer() < 0 || members[fault.globalPeer()])
            {
                listener.onFault(fault.code(), fault.globalPeer(), fault.message());
            }
        }
    }

    /**
     * The communicator starts collective {@code seq}: messages of that sequence number must carry {@code desc}.
     *
     * @param seq  the sequence number.
     * @param desc this rank's operation.
     */
    public void beginOp(final long seq, final OpDescriptor desc)
    {
        Unexpected mismatched = null;
        Unexpected leftOver = null;
        synchronized (this)
        {
            expectedSeq = seq;
            expectedDesc = desc;
            recent[(int)(seq % RECENT_OPS)] = desc;
            for (int g = 0; g < unexpected.length && mismatched == null && leftOver == null; g++)
            {
                for (final Unexpected u : unexpected[g])
                {
                    if (Tags.phase(u.tag) == Tags.P2P_PHASE)
                    {
                        continue;
                    }
                    if (u.seq == seq && !desc.equals(u.desc))
                    {
                        mismatched = u;
                        break;
                    }
                    if (u.seq < seq)
                    {
                        // It came after this rank had finished that operation and before this one began: no
                        // receive will ever take it, so the ranks disagreed on how much to send.
                        leftOver = u;
                        break;
                    }
                }
            }
        }
        if (mismatched != null)
        {
            fault(ErrorCode.E_MISMATCH, mismatched.from, mismatchMessage(mismatched.desc, seq, desc));
        }
        else if (leftOver != null)
        {
            fault(ErrorCode.E_MISMATCH, leftOver.from, "{peer} sent " + leftOver.length +
                " bytes for operation #" + leftOver.seq + " (" + leftOver.desc + ", tag " +
                Tags.describe(leftOver.tag) + ") that no receive took: it came after this rank had finished that " +
                "operation, so the ranks disagreed on how much to send (the counts of a V collective, say)");
        }
    }

    /**
     * The communicator finished collective {@code seq} without an error: a message of it that no receive took means
     * the ranks disagreed on how much to send (the counts of a V collective, say), though every receive got the
     * length it asked for. Such messages are dropped and described.
     *
     * @param seq the sequence number.
     * @return what was left, naming the sender and tag, or null when nothing was.
     */
    public String endOp(final long seq)
    {
        final StringBuilder left = new StringBuilder();
        synchronized (this)
        {
            for (int g = 0; g < unexpected.length; g++)
            {
                for (final java.util.Iterator<Unexpected> it = unexpected[g].iterator(); it.hasNext(); )
                {
                    final Unexpected u = it.next();
                    if (u.seq == seq && Tags.phase(u.tag) != Tags.P2P_PHASE)
                    {
                        it.remove();
                        left.append(left.length() == 0 ? "" : "; ").append("rank ").append(u.from).append(" sent ")
                            .append(u.length).append(" bytes with tag ").append(Tags.describe(u.tag))
                            .append(" that no receive took");
                    }
                }
            }
        }
        return left.length() == 0 ? null : left.toString();
    }

    /**
     * Posts a receive (called by the communicator's stream).
     *
     * @param from    the sender, in the root communicator.
     * @param seq     the sequence number.
     * @param tag     the tag.
     * @param mine    this rank's operation.
     * @param dst     the destination.
     * @param offset  first byte of the destination.
     * @param length  bytes expected.
     * @param reducer the kernel, or null to copy.
     * @param left    with a reducer, the left operand ({@code dst = left op received}), or null to reduce into
     *                {@code dst} as it is.
     * @param leftOffset first byte of {@code left}.
     * @param request completes when the data is in place.
     */
    public void post(
        final int from,
        final long seq,
        final long tag,
        final OpDescriptor mine,
        final ByteBuffer dst,
        final int offset,
        final int length,
        final Reducer reducer,
        final ByteBuffer left,
        final int leftOffset,
        final Request request)
    {
        final PostedRecv recv = new PostedRecv(
            this, from, seq, tag, mine, dst, offset, length, reducer, left, leftOffset, request);
        Unexpected early = null;
        String problem = null;
        synchronized (this)
        {
            if (failure != null)
            {
                request.fail(failure);
                return;
            }
            final ArrayList<Unexpected> waiting = unexpected[from];
            for (int i = 0, n = waiting.size(); i < n; i++)
            {
                final Unexpected u = waiting.get(i);
                if (u.matches(seq, tag))
                {
                    waiting.remove(i);
                    early = u;
                    break;
                }
            }
            if (early == null)
            {
                if (peerGone[from])
                {
                    problem = "{peer} is gone (" + peerGoneReason[from] + ") and this rank still waits for its data";
                }
                else
                {
                    posted[from].add(recv);
                }
            }
            else
            {
                problem = checkMatch(early.desc, early.length, recv);
                if (problem == null && !early.complete)
                {
                    early.attached = recv; // the transport thread delivers when the last byte arrives
                    inflight.add(recv);
                    early = null;
                }
            }
        }
        if (problem != null)
        {
            fault(problem.startsWith("{peer} is gone") ? ErrorCode.E_REMOTE : ErrorCode.E_MISMATCH, from, problem);
            request.fail(failureOr(problem));
            return;
        }
        if (early != null)
        {
            early.deliverTo(recv);
        }
    }

    /**
     * A message has begun to arrive (called by a transport thread).
     *
     * @param from   the sender, in the root communicator.
     * @param seq    the sequence number.
     * @param tag    the tag.
     * @param desc   the sender's operation.
     * @param length payload bytes.
     * @return where the payload goes.
     */
    public MessageSink onMessage(final int from, final long seq, final long tag, final OpDescriptor desc, final int length)
    {
        String problem = null;
        MessageSink sink = null;
        PostedRecv refused = null;
        synchronized (this)
        {
            if (failure != null)
            {
                return DISCARD;
            }
            final boolean collective = Tags.phase(tag) != Tags.P2P_PHASE;
            if (collective && seq == expectedSeq && !desc.equals(expectedDesc))
            {
                problem = mismatchMessage(desc, seq, expectedDesc);
            }
            else if (collective && seq < expectedSeq)
            {
                // This rank finished #seq without this message (a broadcast root only sends): if the peer ran
                // another operation there, say so; the same operation arriving late would be a protocol bug.
                final OpDescriptor ran = expectedSeq - seq < RECENT_OPS ? recent[(int)(seq % RECENT_OPS)] : null;
                problem = ran != null && !ran.equals(desc) ? mismatchMessage(desc, seq, ran) :
                    "{peer} sent a message for operation #" + seq + " (" + desc + ", tag " + Tags.describe(tag) +
                    ") after this rank finished it";
            }
            else
            {
                final ArrayList<PostedRecv> waiting = posted[from];
                for (int i = 0, n = waiting.size(); i < n; i++)
                {
                    final PostedRecv p = waiting.get(i);
                    if (p.matches(seq, tag))
                    {
                        waiting.remove(i);
                        problem = checkMatch(desc, length, p);
                        if (problem == null)
                        {
                            sink = p;
                            inflight.add(p);
                        }
                        else
                        {
                            refused = p; // off the posted list: failing the communicator no longer reaches it
                        }
                        break;
                    }
                }
                if (sink == null && problem == null)
                {
                    final Unexpected u = new Unexpected(this, from, seq, tag, desc, length);
                    unexpected[from].add(u);
                    sink = u;
                }
            }
        }
        if (problem != null)
        {
            fault(ErrorCode.E_MISMATCH, from, problem);
            if (refused != null)
            {
                refused.request.fail(failureOr(problem));
            }
            return DISCARD;
        }
        return sink;
    }

    synchronized void finished(final PostedRecv recv)
    {
        final int i = inflight.indexOf(recv);
        if (i >= 0)
        {
            inflight.remove(i);
        }
    }

    synchronized PostedRecv unexpectedComplete(final Unexpected u)
    {
        u.complete = true;
        return u.attached;
    }

    /**
     * The communicator failed: every posted receive fails, and so will every later one.
     *
     * @param cause the communicator's failure.
     */
    public void fail(final HcclException cause)
    {
        final ArrayList<PostedRecv> failed = new ArrayList<>();
        synchronized (this)
        {
            if (failure != null)
            {
                return;
            }
            failure = cause;
            for (final PostedRecv p : inflight)
            {
                p.cancel(); // bytes still streaming in must not reach a buffer the user has been given back
            }
            failed.addAll(inflight);
            inflight.clear();
            for (int g = 0; g < posted.length; g++)
            {
                failed.addAll(posted[g]);
                posted[g].clear();
                unexpected[g].clear();
            }
        }
        for (final PostedRecv p : failed)
        {
            p.request.fail(cause);
        }
    }

    /**
     * A peer is gone: its connection failed, it aborted, or it closed. Receives posted from it fail the communicator;
     * so will later ones that its buffered messages cannot satisfy.
     *
     * @param globalPeer the peer, in the root communicator.
     * @param code       the category of the fault it causes.
     * @param reason     what happened.
     * @param orderly    true when the peer closed in good order: a fault only if this rank still waits for it.
     */
    public void peerGone(final int globalPeer, final ErrorCode code, final String reason, final boolean orderly)
    {
        final boolean waiting;
        synchronized (this)
        {
            if (peerGone[globalPeer])
            {
                return;
            }
            peerGone[globalPeer] = true;
            peerGoneOrderly[globalPeer] = orderly;
            peerGoneCode[globalPeer] = code;
            peerGoneReason[globalPeer] = reason;
            if (members == null || !members[globalPeer])
            {
                return; // attach() reports it if the peer turns out to be a member
            }
            waiting = !posted[globalPeer].isEmpty();
        }
        if (!orderly || waiting)
        {
            fault(code, globalPeer, orderly ?
                "{peer} " + reason + " while this rank still waits for its data" : "{peer} " + reason);
        }
    }

    /**
     * A peer's instance of this communicator failed, and it says why.
     *
     * @param globalPeer the peer, in the root communicator.
     * @param reason     its failure.
     */
    public void peerAborted(final int globalPeer, final String reason)
    {
        synchronized (this)
        {
            if (members != null && !members[globalPeer])
            {
                return;
            }
        }
        fault(ErrorCode.E_REMOTE, globalPeer, "{peer} failed: " + reason);
    }

    private String checkMatch(final OpDescriptor theirs, final int length, final PostedRecv recv)
    {
        final boolean p2p = Tags.phase(recv.tag) == Tags.P2P_PHASE;
        if (p2p && (theirs.dataType() != recv.mine.dataType() || theirs.count() != recv.mine.count()))
        {
            return "{peer} issued " + theirs + " but this rank issued " + recv.mine;
        }
        if (length != recv.length)
        {
            return "{peer} sent " + length + " bytes for " + theirs + " (tag " + Tags.describe(recv.tag) +
                ") but this rank expected " + recv.length + " for " + recv.mine;
        }
        return null;
    }

    private static String mismatchMessage(final OpDescriptor theirs, final long seq, final OpDescriptor mine)
    {
        return "operation mismatch at #" + seq + ": {peer} issued " + theirs + " while this rank issued " + mine +
            "; every rank must issue the same collectives in the same order";
    }

    private void fault(final ErrorCode code, final int globalPeer, final String message)
    {
        final FaultListener l;
        synchronized (this)
        {
            l = listener;
            if (l == null)
            {
                earlyFaults.add(new Fault(code, globalPeer, message));
                return;
            }
        }
        l.onFault(code, globalPeer, message);
    }

    private synchronized HcclException failureOr(final String message)
    {
        return failure != null ? failure : new HcclException(ErrorCode.E_INTERNAL, message.replace("{peer}", "peer"));
    }

    /**
     * A fault kept until the communicator attaches.
     *
     * @param code       what kind.
     * @param globalPeer the peer, in the root communicator, or negative for none.
     * @param message    what happened; {@code {peer}} stands for the peer's rank.
     */
    private record Fault(ErrorCode code, int globalPeer, String message)
    {
    }
}
