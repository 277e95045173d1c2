package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

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
 * bytes are moved, and messages sent, outside it.
 * <p>
 * The mailbox also sends its communicator's messages, eagerly or by rendezvous ({@link FlowControl}): a message
 * waiting for its receiver's clear to send is held here, and fails with the communicator.
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
    private final FlowControl flow;
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
    private final Outbox outbox;
    /** Guarded by this: what each peer said of its collectives when it closed; null until it did. */
    private final ClosingRecord[] closing;
    /** Where this rank is in the communicator, for a peer that asks; set by the communicator. */
    private volatile Supplier<Position> whereabouts;
    /** Told of each peer's answer while this rank asks where its peers are; else null. */
    private volatile BiConsumer<Integer, Position> survey;
    /** Requests to send from each peer that no receive has taken yet. */
    private final int[] unexpectedRts;
    /** After a failure: rendezvous messages cleared to come, which carry no credit to give back. */
    private final HashSet<MessageKey> clearedBeforeFailure = new HashSet<>();

    /**
     * A mailbox for a communicator of the process whose root communicator has {@code rootWorldSize} ranks.
     *
     * @param commId        the communicator.
     * @param rootWorldSize ranks in the root communicator.
     */
    public Mailbox(final long commId, final int rootWorldSize)
    {
        this(commId, rootWorldSize, new FlowControl(rootWorldSize, Integer.MAX_VALUE));
    }

    /**
     * A mailbox whose messages go under {@code flow}'s budget.
     *
     * @param commId        the communicator.
     * @param rootWorldSize ranks in the root communicator.
     * @param flow          the process's flow control for the root communicator.
     */
    @SuppressWarnings("unchecked")
    public Mailbox(final long commId, final int rootWorldSize, final FlowControl flow)
    {
        this.commId = commId;
        this.flow = flow;
        posted = new ArrayList[rootWorldSize];
        unexpected = new ArrayList[rootWorldSize];
        outbox = new Outbox(commId, rootWorldSize, flow);
        closing = new ClosingRecord[rootWorldSize];
        unexpectedRts = new int[rootWorldSize];
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
        final ArrayList<Unexpected> dropped = new ArrayList<>();
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
                        forget(u, dropped);
                        left.append(left.length() == 0 ? "" : "; ").append("rank ").append(u.from).append(" sent ")
                            .append(u.length).append(" bytes with tag ").append(Tags.describe(u.tag))
                            .append(" that no receive took");
                    }
                }
            }
        }
        releaseAll(dropped);
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
        ErrorCode problemCode = ErrorCode.E_MISMATCH;
        boolean clear = false;
        final ArrayList<Unexpected> dropped = new ArrayList<>();
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
                    problemCode = ErrorCode.E_REMOTE;
                }
                else if (closing[from] != null && neverSent(recv, closing[from].count))
                {
                    problem = closedWhileWaiting(closing[from].count, seq);
                    problemCode = ErrorCode.E_REMOTE;
                }
                else
                {
                    posted[from].add(recv);
                }
            }
            else
            {
                problem = checkMatch(early.desc, early.length, recv);
                if (problem != null)
                {
                    forget(early, dropped);
                    early = null;
                }
                else if (early.rendezvous)
                {
                    unexpectedRts[from]--;
                    recv.rendezvous = true; // its payload comes once the sender hears the clear to send
                    posted[from].add(recv);
                    clear = true;
                    early = null;
                }
                else if (!early.complete)
                {
                    early.attached = recv; // the transport thread delivers when the last byte arrives
                    inflight.add(recv);
                    early = null;
                }
            }
        }
        releaseAll(dropped);
        if (clear)
        {
            flow.clearToSend(from, commId, seq, tag);
            return;
        }
        if (problem != null)
        {
            fault(problemCode, from, problem);
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
        return arrive(from, seq, tag, desc, length, false);
    }

    /**
     * A peer asks to send a message by rendezvous: it is checked as the message would be, and cleared to come once its
     * receive is posted (called by a transport thread).
     *
     * @param from   the sender, in the root communicator.
     * @param seq    the sequence number.
     * @param tag    the tag.
     * @param desc   the sender's operation.
     * @param length payload bytes it will send.
     */
    void onRequestToSend(final int from, final long seq, final long tag, final OpDescriptor desc, final int length)
    {
        arrive(from, seq, tag, desc, length, true);
    }

    private MessageSink arrive(
        final int from, final long seq, final long tag, final OpDescriptor desc, final int length,
        final boolean rendezvous)
    {
        final int cost = FlowControl.cost(length);
        String problem = null;
        ErrorCode code = ErrorCode.E_MISMATCH;
        MessageSink sink = null;
        PostedRecv refused = null;
        boolean clear = false;
        boolean release = false;
        synchronized (this)
        {
            if (failure != null)
            {
                // An eager message gives its credit back; one cleared to come before the failure carried none.
                release = !rendezvous && !clearedBeforeFailure.remove(new MessageKey(from, seq, tag)) &&
                    flow.charge(from, cost);
                sink = DISCARD;
            }
            else
            {
                problem = sequenceProblem(from, seq, tag, desc);
            }
            if (sink == null && problem == null)
            {
                final ArrayList<PostedRecv> waiting = posted[from];
                int match = -1;
                for (int i = 0, n = waiting.size(); i < n && match < 0; i++)
                {
                    match = waiting.get(i).matches(seq, tag) ? i : -1;
                }
                final PostedRecv p = match < 0 ? null : waiting.get(match);
                // An eager message is held to the sender's credit before a byte of it is kept; the payload that a
                // clear to send let come carries none.
                final boolean eager = !rendezvous && (p == null || !p.rendezvous);
                if (eager && !flow.charge(from, cost))
                {
                    code = ErrorCode.E_INTERNAL;
                    problem = "{peer} sent a message of " + length + " bytes beyond the eager credit it holds here " +
                        "(HCCL_EAGER_BUDGET, " + flow.budget() + " bytes): a protocol error";
                }
                else if (p != null)
                {
                    problem = checkMatch(desc, length, p);
                    release = eager;
                    if (problem != null)
                    {
                        waiting.remove(match);
                        refused = p; // off the posted list: failing the communicator no longer reaches it
                    }
                    else if (rendezvous)
                    {
                        p.rendezvous = true; // stays posted for the payload that the clear to send lets come
                        clear = true;
                        sink = DISCARD;
                    }
                    else
                    {
                        waiting.remove(match);
                        sink = p; // it streams into place: it holds no memory here
                        inflight.add(p);
                    }
                }
                else if (rendezvous && ++unexpectedRts[from] > FlowControl.MAX_RTS_IN_FLIGHT)
                {
                    unexpectedRts[from]--;
                    code = ErrorCode.E_INTERNAL;
                    problem = "{peer} has more than " + FlowControl.MAX_RTS_IN_FLIGHT + " requests to send " +
                        "unanswered here, above the flow-control protocol's bound";
                }
                else
                {
                    final Unexpected u = new Unexpected(this, from, seq, tag, desc, length, rendezvous);
                    unexpected[from].add(u);
                    sink = u; // an eager one is released when a receive takes it, or when it is dropped
                }
            }
            else if (problem != null && !rendezvous)
            {
                release = flow.charge(from, cost); // dropped: its credit goes back
            }
        }
        if (release)
        {
            flow.released(from, cost);
        }
        if (problem != null)
        {
            fault(code, from, problem);
            if (refused != null)
            {
                refused.request.fail(failureOr(problem));
            }
            return DISCARD;
        }
        if (clear)
        {
            flow.clearToSend(from, commId, seq, tag);
        }
        return sink;
    }

    /** Whether a message of {@code seq} cannot be for this rank's operation there; the problem, or null. */
    private String sequenceProblem(final int from, final long seq, final long tag, final OpDescriptor desc)
    {
        final boolean collective = Tags.phase(tag) != Tags.P2P_PHASE;
        if (collective && seq == expectedSeq && !desc.equals(expectedDesc))
        {
            return mismatchMessage(desc, seq, expectedDesc);
        }
        if (collective && seq < expectedSeq)
        {
            // This rank finished #seq without this message (a broadcast root only sends): if the peer ran
            // another operation there, say so; the same operation arriving late would be a protocol bug.
            final OpDescriptor ran = expectedSeq - seq < RECENT_OPS ? recent[(int)(seq % RECENT_OPS)] : null;
            return ran != null && !ran.equals(desc) ? mismatchMessage(desc, seq, ran) :
                "{peer} sent a message for operation #" + seq + " (" + desc + ", tag " + Tags.describe(tag) +
                ") after this rank finished it";
        }
        return null;
    }

    /**
     * Sends a message of this communicator, eagerly or by rendezvous ({@link Outbox}).
     *
     * @param to      the receiver, in the root communicator.
     * @param seq     the sequence number.
     * @param tag     the tag.
     * @param desc    this rank's operation.
     * @param payload the bytes, from position to limit; not modified, and not to be reused until {@code done}.
     * @param done    completes when the payload may be reused.
     */
    public void send(
        final int to, final long seq, final long tag, final OpDescriptor desc, final ByteBuffer payload,
        final Request done)
    {
        if (!outbox.send(to, seq, tag, desc, payload, done))
        {
            final String gone;
            synchronized (this)
            {
                gone = "{peer} is gone (" + peerGoneReason[to] + ") and this rank still sends to it";
            }
            fault(ErrorCode.E_REMOTE, to, gone);
            done.fail(failureOr(gone));
        }
    }

    /**
     * The receiver of a message sent by rendezvous has posted its receive (called by a transport thread).
     *
     * @param from the receiver, in the root communicator.
     * @param seq  the message's sequence number.
     * @param tag  the message's tag.
     */
    void onClearToSend(final int from, final long seq, final long tag)
    {
        outbox.onClearToSend(from, seq, tag);
    }

    /**
     * Where this rank is, for peers that ask.
     *
     * @param whereabouts this rank's position in the communicator.
     */
    public void answerPositionsFrom(final Supplier<Position> whereabouts)
    {
        this.whereabouts = whereabouts;
    }

    /**
     * Asks a peer where it is; its answer goes to the survey in place ({@link #surveyWith}).
     *
     * @param globalPeer the peer, in the root communicator.
     */
    public void askPosition(final int globalPeer)
    {
        flow.askPosition(globalPeer, commId);
    }

    /**
     * Where the peers' answers go.
     *
     * @param listener told of each answer (the peer in the root communicator, its position), or null to stop.
     */
    public void surveyWith(final BiConsumer<Integer, Position> listener)
    {
        this.survey = listener;
    }

    void onPositionQuery(final int from)
    {
        final Supplier<Position> w = whereabouts;
        if (w != null)
        {
            flow.tellPosition(from, commId, w.get());
        }
    }

    void onPosition(final int from, final Position position)
    {
        final BiConsumer<Integer, Position> s = survey;
        if (s != null)
        {
            s.accept(from, position);
        }
    }

    /**
     * Tells every peer, at close, the collectives this rank issued: their count, their hash, and the last
     * {@link FlowControl#CLOSING_ENTRIES} one by one.
     *
     * @param globalPeers the peers, in the root communicator.
     * @param count       collectives issued.
     * @param hash        their hash, in order.
     * @param lastSeqs    the last ones' sequence numbers, oldest first (at most {@link FlowControl#CLOSING_ENTRIES}).
     * @param lastDescs   the last ones.
     */
    public void tellClosing(
        final int[] globalPeers, final long count, final long hash, final long[] lastSeqs,
        final OpDescriptor[] lastDescs)
    {
        for (final int peer : globalPeers)
        {
            if (lastSeqs.length == 0)
            {
                flow.tellClosing(peer, commId, -1, null, count, hash);
            }
            for (int i = 0; i < lastSeqs.length; i++)
            {
                flow.tellClosing(peer, commId, lastSeqs[i], lastDescs[i], count, hash);
            }
        }
    }

    /**
     * A peer closed, naming how many collectives it issued. A receive of a later collective from it can never
     * complete: this rank issued a collective the peer did not, and fails now rather than when the peer's close gives
     * up waiting for this rank's record. Only later collectives: the peer's data for its own last ones may still be on
     * its way, on another connection of the link than this message.
     */
    void onClosing(final int from, final long seq, final OpDescriptor desc, final long count, final long hash)
    {
        long waitingFor = -1;
        synchronized (this)
        {
            ClosingRecord r = closing[from];
            if (r == null || r.count != count || r.hash != hash)
            {
                r = new ClosingRecord(count, hash);
                closing[from] = r;
            }
            if (seq >= 0 && r.last.size() < FlowControl.CLOSING_ENTRIES)
            {
                r.last.put(seq, desc);
            }
            if (members == null || members[from])
            {
                for (final PostedRecv p : posted[from])
                {
                    if (neverSent(p, count))
                    {
                        waitingFor = p.seq;
                        break;
                    }
                }
            }
            notifyAll();
        }
        if (waitingFor >= 0)
        {
            fault(ErrorCode.E_REMOTE, from, closedWhileWaiting(count, waitingFor));
        }
    }

    /** Whether a receive is of a collective numbered beyond the {@code count} that its peer issued before closing. */
    private static boolean neverSent(final PostedRecv recv, final long count)
    {
        final Operation op = recv.mine.operation();
        return op != Operation.SEND && op != Operation.RECV && recv.seq >= count;
    }

    private static String closedWhileWaiting(final long count, final long seq)
    {
        return "{peer} closed its communicator after issuing " + count + " collectives, while this rank waits for " +
            "its data in collective #" + seq + ": every rank must issue the same collectives (did {peer} fail, or " +
            "leave a loop early?)";
    }

    /**
     * Waits until every peer has said what it issued ({@link #tellClosing}), is gone, or the deadline passes.
     *
     * @param globalPeers   the peers, in the root communicator.
     * @param deadlineNanos when to stop waiting, by {@link System#nanoTime()}.
     * @return each peer's record, in the order given; null for a peer that is gone or did not say in time.
     */
    public synchronized ClosingRecord[] awaitClosing(final int[] globalPeers, final long deadlineNanos)
    {
        final ClosingRecord[] got = new ClosingRecord[globalPeers.length];
        try
        {
            while (true)
            {
                boolean waiting = false;
                for (int i = 0; i < globalPeers.length; i++)
                {
                    final ClosingRecord r = closing[globalPeers[i]];
                    got[i] = r != null && r.complete() ? r : null;
                    waiting |= got[i] == null && !peerGone[globalPeers[i]];
                }
                final long left = deadlineNanos - System.nanoTime();
                if (!waiting || failure != null || left <= 0)
                {
                    return got;
                }
                wait(Math.max(1, Math.min(100, left / 1_000_000)));
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return got;
        }
    }

    /** What a peer said of its collectives when it closed. */
    public static final class ClosingRecord
    {
        /** Collectives it issued. */
        public final long count;
        /** Their hash, in order. */
        public final long hash;
        /** Its last collectives by sequence number. */
        public final Map<Long, OpDescriptor> last = new HashMap<>();

        ClosingRecord(final long count, final long hash)
        {
            this.count = count;
            this.hash = hash;
        }

        boolean complete()
        {
            return last.size() >= Math.min(count, FlowControl.CLOSING_ENTRIES);
        }
    }

    /**
     * @return whether the communicator has failed here.
     */
    synchronized boolean hasFailed()
    {
        return failure != null;
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
        final ArrayList<Unexpected> dropped = new ArrayList<>();
        synchronized (this)
        {
            if (failure != null)
            {
                return;
            }
            failure = cause;
            notifyAll();
            for (final PostedRecv p : inflight)
            {
                p.cancel(); // bytes still streaming in must not reach a buffer the user has been given back
            }
            failed.addAll(inflight);
            inflight.clear();
            for (int g = 0; g < posted.length; g++)
            {
                for (final PostedRecv p : posted[g])
                {
                    if (p.rendezvous)
                    {
                        clearedBeforeFailure.add(new MessageKey(g, p.seq, p.tag));
                    }
                }
                failed.addAll(posted[g]);
                posted[g].clear();
                for (final Unexpected u : unexpected[g])
                {
                    forget(u, dropped);
                }
                unexpected[g].clear();
            }
        }
        releaseAll(dropped);
        outbox.fail(cause);
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
        final boolean member;
        synchronized (this)
        {
            if (peerGone[globalPeer])
            {
                return;
            }
            peerGone[globalPeer] = true;
            notifyAll(); // a close waiting for its record stops waiting
            peerGoneOrderly[globalPeer] = orderly;
            peerGoneCode[globalPeer] = code;
            peerGoneReason[globalPeer] = reason;
            member = members != null && members[globalPeer];
            waiting = !posted[globalPeer].isEmpty();
        }
        final boolean sending = outbox.peerGone(globalPeer);
        if (!member)
        {
            return; // attach() reports it if the peer turns out to be a member
        }
        if (!orderly || waiting || sending)
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

    /** Unexpected delivered: its buffer is let go, so its credit goes back. */
    void released(final Unexpected u)
    {
        flow.released(u.from, FlowControl.cost(u.length));
    }

    /** Under the lock: a record dropped from the queues; what it buffered is added to {@code dropped}. */
    private void forget(final Unexpected u, final ArrayList<Unexpected> dropped)
    {
        if (u.rendezvous)
        {
            unexpectedRts[u.from]--;
        }
        else
        {
            dropped.add(u);
        }
    }

    private void releaseAll(final ArrayList<Unexpected> dropped)
    {
        for (final Unexpected u : dropped)
        {
            released(u);
        }
    }

    /**
     * Bytes held in buffers for messages that no receive has taken yet (for tests and diagnostics).
     *
     * @return the bytes, over every peer.
     */
    public synchronized long bufferedBytes()
    {
        long bytes = 0;
        for (final ArrayList<Unexpected> list : unexpected)
        {
            for (final Unexpected u : list)
            {
                bytes += u.rendezvous ? 0 : u.length;
            }
        }
        return bytes;
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
            if (!theirs.hasCount() && theirs.equals(recv.mine) && null != theirs.dataType())
            {
                return blockMismatch(theirs, length, recv);
            }
            return "{peer} sent " + length + " bytes for " + theirs + " (tag " + Tags.describe(recv.tag) +
                ") but this rank expected " + recv.length + " for " + recv.mine;
        }
        return null;
    }

    /**
     * A message of the same operation, one without a count in its fingerprint ({@code allToAllV}), has the wrong
     * length: the sender's count for this rank and this rank's count for the sender differ, which only the pair's
     * messages show. Says it in elements and in the arguments' names.
     */
    private static String blockMismatch(final OpDescriptor theirs, final int length, final PostedRecv recv)
    {
        final int size = theirs.dataType().size();
        return "{peer} sent a message of " + length + " bytes (" + length / size + " " + theirs.dataType() +
            " elements) in " + theirs + " (tag " + Tags.describe(recv.tag) + ") where this rank expected " +
            recv.length + " bytes (" +
            recv.length / size + " elements): {peer}'s sendCounts entry for this rank and this rank's recvCounts " +
            "entry for {peer} differ, and must be equal";
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

    /** A message, by sender, sequence number and tag. */
    private record MessageKey(int from, long seq, long tag)
    {
    }

}
