package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.function.Predicate;

/**
 * Matches incoming messages with posted receives for one communicator, by sender, sequence number and tag.
 * <p>
 * A message whose receive is already posted is written straight into its destination by the transport thread; one
 * that comes first waits in a buffer of its own. Every message is checked against the operation this rank runs at
 * its sequence number ({@link OpFingerprints}), so that ranks that issue different collectives fail at once, naming
 * both, instead of hanging or mixing data.
 * <p>
 * Peers are indexed by their rank in the root communicator, so that a mailbox can take messages before its
 * communicator exists (a peer may finish {@code split} first). Thread-safe: one lock guards the queues; payload
 * bytes are moved, and messages sent, outside it.
 * <p>
 * Beside the matching, a mailbox holds its communicator's other ends of the wire, each a class of its own: the
 * sending side ({@link Outbox}), the close-time confirmation ({@link ClosingRecords}), position queries
 * ({@link PositionDesk}) and the faults it reports to its communicator ({@link FaultFanout}). Which peers are gone
 * it reads from the process's {@link PeerStates}.
 */
public final class Mailbox
{
    /** Drops a payload: for messages of closed or failed communicators. */
    static final MessageSink DISCARD = DiscardSink.INSTANCE;

    private final long commId;
    private final FlowControl flow;
    private final PeerStates peers;
    private final ArrayList<PostedRecv>[] posted;
    /** Messages that came before their receive. */
    private final HeldMessages held;
    /** Receives matched with a message whose bytes are still arriving: failed too if the communicator fails. */
    private final ArrayList<PostedRecv> inflight = new ArrayList<>();
    private final OpFingerprints fingerprints = new OpFingerprints();
    private HcclException failure;
    private final Outbox outbox;
    private final ClosingRecords closings;
    private final PositionDesk positions;
    private final FaultFanout faults;
    /** After a failure: rendezvous messages cleared to come, which carry no credit to give back. */
    private final HashSet<MessageKey> clearedBeforeFailure = new HashSet<>();

    /**
     * A mailbox for a communicator of the process whose root communicator has {@code rootWorldSize} ranks, alone in
     * its process: for tests of matching.
     *
     * @param commId        the communicator.
     * @param rootWorldSize ranks in the root communicator.
     */
    public Mailbox(final long commId, final int rootWorldSize)
    {
        this(commId, rootWorldSize, new FlowControl(rootWorldSize, Integer.MAX_VALUE), new PeerStates(rootWorldSize));
    }

    /**
     * A mailbox whose messages go under {@code flow}'s budget.
     *
     * @param commId        the communicator.
     * @param rootWorldSize ranks in the root communicator.
     * @param flow          the process's flow control for the root communicator.
     * @param peers         the process's record of the peers that are gone.
     */
    @SuppressWarnings("unchecked")
    Mailbox(final long commId, final int rootWorldSize, final FlowControl flow, final PeerStates peers)
    {
        this.commId = commId;
        this.flow = flow;
        this.peers = peers;
        posted = new ArrayList[rootWorldSize];
        held = new HeldMessages(rootWorldSize);
        faults = new FaultFanout(peers, this::fail);
        outbox = new Outbox(commId, rootWorldSize, flow, peers, faults);
        closings = new ClosingRecords(commId, flow, peers, rootWorldSize);
        positions = new PositionDesk(commId, flow);
        for (int i = 0; i < rootWorldSize; i++)
        {
            posted[i] = new ArrayList<>();
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
        faults.attach(memberGlobalRanks, posted.length, listener);
    }

    /**
     * Where this rank is, for peers that ask, and where they are.
     *
     * @return the communicator's position queries.
     */
    public PositionDesk positions()
    {
        return positions;
    }

    /**
     * The close-time confirmation of the collectives each rank issued.
     *
     * @return the communicator's closing records.
     */
    public ClosingRecords closings()
    {
        return closings;
    }

    /**
     * The communicator starts collective {@code seq}: messages of that sequence number must carry {@code desc}.
     *
     * @param seq  the sequence number.
     * @param desc this rank's operation.
     */
    public void beginOp(final long seq, final OpDescriptor desc)
    {
        final HeldMessages.Problem found;
        synchronized (this)
        {
            fingerprints.begin(seq, desc);
            found = held.firstProblem(seq, desc);
        }
        if (found != null)
        {
            faults.report(Fault.of(ErrorCode.E_MISMATCH, found.message().from, found.problem()));
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
        final ArrayList<Unexpected> dropped = new ArrayList<>();
        final String left;
        synchronized (this)
        {
            left = held.dropLeftovers(seq, dropped);
        }
        releaseAll(dropped);
        return left;
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
        Throwable problemCause = null;
        boolean clear = false;
        final ArrayList<Unexpected> dropped = new ArrayList<>();
        synchronized (this)
        {
            if (failure != null)
            {
                request.fail(failure);
                return;
            }
            early = held.take(from, seq, tag);
            if (early == null)
            {
                final PeerStates.Departure gone = peers.departure(from);
                final long issued = closings.issuedBy(from);
                if (gone != null)
                {
                    problem = "{peer} is gone (" + gone.reason() + ") and this rank still waits for its data";
                    problemCode = ErrorCode.E_REMOTE;
                    problemCause = gone.cause();
                }
                else if (ClosingRecords.neverSent(recv, issued))
                {
                    problem = ClosingRecords.closedWhileWaiting(issued, seq);
                    problemCode = ErrorCode.E_REMOTE;
                }
                else
                {
                    posted[from].add(recv);
                }
            }
            else
            {
                problem = OpFingerprints.matchProblem(early.desc, early.length, recv);
                if (problem != null)
                {
                    HeldMessages.discard(early, dropped);
                    early = null;
                }
                else if (early.rendezvous)
                {
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
            faults.report(new Fault(problemCode, from, problem, problemCause, false));
            request.fail(failureOr(problem, problemCause));
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
                problem = fingerprints.arrivalProblem(seq, tag, desc);
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
                    problem = OpFingerprints.matchProblem(desc, length, p);
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
                else if (rendezvous)
                {
                    final Unexpected u = new Unexpected(this, from, seq, tag, desc, length, true);
                    if (held.holdRequest(u))
                    {
                        sink = u;
                    }
                    else
                    {
                        code = ErrorCode.E_INTERNAL;
                        problem = "{peer} has more than " + FlowControl.MAX_RTS_IN_FLIGHT + " requests to send " +
                            "unanswered here, above the flow-control protocol's bound";
                    }
                }
                else
                {
                    final Unexpected u = new Unexpected(this, from, seq, tag, desc, length, false);
                    held.holdMessage(u);
                    sink = u; // released when a receive takes it, or when it is dropped
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
            faults.report(Fault.of(code, from, problem));
            if (refused != null)
            {
                refused.request.fail(failureOr(problem, null));
            }
            return DISCARD;
        }
        if (clear)
        {
            flow.clearToSend(from, commId, seq, tag);
        }
        return sink;
    }

    /**
     * The sending side of the communicator.
     *
     * @return its outbox.
     */
    public Outbox outbox()
    {
        return outbox;
    }

    /**
     * One entry of a peer's closing record came (called by a transport thread): a receive of a later collective from
     * it can never complete, since this rank issued a collective the peer did not, and fails now rather than when the
     * peer's close gives up waiting for this rank's record. Only later collectives: the peer's data for its own last
     * ones may still be on its way, on another connection of the link than this message.
     */
    void onClosing(final int from, final long seq, final OpDescriptor desc, final long count, final long hash)
    {
        closings.onEntry(from, seq, desc, count, hash);
        final PostedRecv never = faults.isOutsider(from) ? null :
            firstPosted(from, p -> ClosingRecords.neverSent(p, count));
        if (never != null)
        {
            faults.report(Fault.of(ErrorCode.E_REMOTE, from, ClosingRecords.closedWhileWaiting(count, never.seq)));
        }
    }

    private synchronized PostedRecv firstPosted(final int from, final Predicate<PostedRecv> which)
    {
        return posted[from].stream().filter(which).findFirst().orElse(null);
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
            }
            held.dropAll(dropped);
        }
        releaseAll(dropped);
        closings.wake(true);
        outbox.fail(cause);
        for (final PostedRecv p : failed)
        {
            p.request.fail(cause);
        }
    }

    /**
     * A peer is gone: its connection failed, it aborted, or it closed ({@link PeerStates} says how; called once per
     * peer, after it was recorded there). Receives posted from it fail the communicator; so will later ones that its
     * buffered messages cannot satisfy. A peer that closed in good order is a fault only if this rank still waits for
     * it or still sends to it.
     *
     * @param globalPeer the peer, in the root communicator.
     */
    void peerGone(final int globalPeer)
    {
        final PeerStates.Departure gone = peers.departure(globalPeer);
        final boolean waiting;
        synchronized (this)
        {
            waiting = !posted[globalPeer].isEmpty();
        }
        closings.wake(false); // a close waiting for its record stops waiting
        final boolean sending = outbox.holdsFor(globalPeer);
        if (!gone.orderly() || waiting || sending)
        {
            // Before attach(), attach() reports it if the peer turns out to be a member.
            faults.reportDeparture(globalPeer, new Fault(gone.code(), globalPeer, gone.orderly() ? "{peer} " +
                gone.reason() + " while this rank still waits for its data" : "{peer} " + gone.reason(), gone.cause(),
                false));
        }
    }

    /**
     * A peer's instance of this communicator failed, and it says why: this rank's failure follows from it.
     *
     * @param globalPeer the peer, in the root communicator.
     * @param reason     its failure.
     */
    public void peerAborted(final int globalPeer, final String reason)
    {
        if (!faults.isOutsider(globalPeer))
        {
            faults.report(new Fault(ErrorCode.E_REMOTE, globalPeer, "{peer} failed: " + reason, null, true));
        }
    }

    /** Unexpected delivered: its buffer is let go, so its credit goes back. */
    void released(final Unexpected u)
    {
        flow.released(u.from, FlowControl.cost(u.length));
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
        return held.bufferedBytes();
    }

    /** The communicator's failure, which the fault just reported has set; or, before it attached, one of its own. */
    private synchronized HcclException failureOr(final String message, final Throwable cause)
    {
        return failure != null ? failure :
            new HcclException(ErrorCode.E_INTERNAL, message.replace("{peer}", "peer"), cause);
    }

    /** A message, by sender, sequence number and tag. */
    private record MessageKey(int from, long seq, long tag)
    {
    }

}
