package dev.hccl.core.mailbox;

import dev.hccl.api.Operation;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.IntFunction;

/**
 * What bounds the memory a peer can make this process hold, one budget per pair of ranks, shared by every communicator
 * of the pair (NCCL's and MPI's eager and rendezvous protocols).
 * <p>
 * A message goes <em>eager</em>, straight on the wire, when the sender holds credit for it: its length plus
 * {@link #MESSAGE_COST} from {@code HCCL_EAGER_BUDGET} bytes per peer. The receiver gives the credit back once the
 * message holds no memory there: at once when a receive was posted for it (it streams into place), else when a
 * receive takes it from its buffer, or when it is dropped. Credit comes back in {@link #CREDIT} messages, a quarter of
 * the budget at a time. A message without credit goes by <em>rendezvous</em>: the sender keeps the payload and sends a
 * request to send ({@link #RTS}, the message's header and length), the receiver answers clear to send ({@link #CTS})
 * once its receive is posted, and only then does the payload go, into place. So the bytes a peer has sent that no
 * receive has taken are at most the budget, plus a header for each of at most {@link #MAX_RTS_IN_FLIGHT} requests per
 * communicator (the sender holds any further ones back); a rank that never receives costs its peers waiting, not
 * memory.
 * <p>
 * Control messages travel as ordinary messages of phase {@link Tags#CONTROL_PHASE} with a 16-byte payload: the tag of
 * the message they are about, and a value (the length for RTS, the bytes returned for CREDIT).
 */
public final class FlowControl
{
    /** What a message costs beyond its payload: the receiver's record of it. */
    public static final int MESSAGE_COST = 64;
    /** Requests to send one communicator may have unanswered at one peer; further ones wait at the sender. */
    public static final int MAX_RTS_IN_FLIGHT = 1024;

    static final int RTS = 1;
    static final int CTS = 2;
    static final int CREDIT = 3;
    /** Where are you in this communicator? (Not flow control: diagnosis, on the same channel.) */
    static final int POSITION_QUERY = 4;
    /** The answer: a {@link Position}, in {@link #POSITION_BYTES}. */
    static final int POSITION = 5;
    /** At close: one of the last collectives this rank issued, with the count and hash of all of them. */
    static final int CLOSING = 6;
    /** The last collectives a closing rank names one by one. */
    public static final int CLOSING_ENTRIES = 4;
    static final int CONTROL_BYTES = 16;
    /** A position's payload: the control message's two values, then the last collectives issued and completed. */
    static final int POSITION_BYTES = 32;
    /** What a control message says it is: no receive ever checks it. */
    private static final OpDescriptor CONTROL_DESC =
        new OpDescriptor(Operation.SEND, null, null, OpDescriptor.NO_ROOT, 0);

    private final int budget;
    private final int returnAt;
    /** Sender side: bytes each peer still lets this rank send eagerly. */
    private final AtomicLongArray credit;
    /** Receiver side: bytes of each peer's eager messages that hold memory here, which its credit bounds. */
    private final AtomicLongArray held;
    /** Receiver side: bytes released that each peer has not been given back yet. */
    private final AtomicLongArray owed;
    private volatile IntFunction<Link> links;
    private final LinkTraffic traffic;

    /**
     * @param rootWorldSize ranks in the root communicator.
     * @param budget        bytes each peer may send eagerly before its receives are posted; 0 for rendezvous only.
     */
    public FlowControl(final int rootWorldSize, final int budget)
    {
        if (budget < 0)
        {
            throw new IllegalArgumentException("budget " + budget);
        }
        this.budget = budget;
        this.returnAt = Math.max(1, budget / 4);
        this.credit = new AtomicLongArray(rootWorldSize);
        this.held = new AtomicLongArray(rootWorldSize);
        this.owed = new AtomicLongArray(rootWorldSize);
        this.traffic = new LinkTraffic(rootWorldSize);
        for (int i = 0; i < rootWorldSize; i++)
        {
            credit.set(i, budget);
        }
    }

    /**
     * What a peer grants: the budget it published at bootstrap, which its receive side holds this rank to.
     *
     * @param peer   the peer, in the root communicator.
     * @param bytes  its {@code HCCL_EAGER_BUDGET}.
     */
    public void grantedBy(final int peer, final int bytes)
    {
        credit.set(peer, bytes);
    }

    /**
     * @return the bytes sent to and received from each peer over its link.
     */
    public LinkTraffic traffic()
    {
        return traffic;
    }

    /**
     * The links control messages go on, once the transports are connected.
     *
     * @param links the link to each rank of the root communicator.
     */
    public void useLinks(final IntFunction<Link> links)
    {
        this.links = links;
    }

    /**
     * @return the bytes each peer may send eagerly.
     */
    public int budget()
    {
        return budget;
    }

    /**
     * The credit this rank holds with a peer (for tests and diagnostics).
     *
     * @param peer the peer, in the root communicator.
     * @return bytes it may still send eagerly.
     */
    public long creditWith(final int peer)
    {
        return credit.get(peer);
    }

    /**
     * The credit released to a peer and not yet given back, less than a quarter of the budget (for tests).
     *
     * @param peer the peer, in the root communicator.
     * @return bytes.
     */
    public long owedTo(final int peer)
    {
        return owed.get(peer);
    }

    /**
     * What a message of {@code length} payload bytes costs the receiver while no receive has taken it.
     *
     * @param length payload bytes.
     * @return its cost.
     */
    static int cost(final int length)
    {
        return length + MESSAGE_COST;
    }

    /**
     * Takes the credit for an eager message, if there is enough.
     *
     * @param peer the receiver, in the root communicator.
     * @param cost the message's {@link #cost}.
     * @return true when it may go eagerly.
     */
    boolean tryAcquire(final int peer, final int cost)
    {
        long c;
        do
        {
            c = credit.get(peer);
            if (c < cost)
            {
                return false;
            }
        }
        while (!credit.compareAndSet(peer, c, c - cost));
        return true;
    }

    /**
     * A peer gave credit back.
     *
     * @param peer  the peer, in the root communicator.
     * @param bytes how much.
     */
    void onCredit(final int peer, final long bytes)
    {
        if (bytes > 0)
        {
            credit.addAndGet(peer, bytes);
        }
    }

    /**
     * An eager message from a peer has begun to arrive: it is held to the peer's budget, which an honest sender
     * never exceeds.
     *
     * @param peer the sender, in the root communicator.
     * @param cost the message's {@link #cost}.
     * @return false when the peer sent beyond its credit: a protocol error.
     */
    boolean charge(final int peer, final int cost)
    {
        if (held.addAndGet(peer, cost) <= budget)
        {
            return true;
        }
        held.addAndGet(peer, -cost);
        return false;
    }

    /**
     * An eager message from a peer holds no memory here any more: its credit goes back, in batches.
     *
     * @param peer the sender, in the root communicator.
     * @param cost the message's {@link #cost}.
     */
    void released(final int peer, final int cost)
    {
        held.addAndGet(peer, -cost);
        final long total = owed.addAndGet(peer, cost);
        if (total < returnAt || links == null)
        {
            return;
        }
        final long bytes = owed.getAndSet(peer, 0);
        if (bytes > 0)
        {
            control(peer, 0, 0, CREDIT, 0, bytes, CONTROL_DESC);
        }
    }

    /**
     * Sends a request to send.
     *
     * @param peer   the receiver, in the root communicator.
     * @param commId the communicator.
     * @param seq    the message's sequence number.
     * @param tag    the message's tag.
     * @param desc   this rank's operation, which the receiver checks as it would the message's.
     * @param length the payload's length.
     */
    void requestToSend(
        final int peer, final long commId, final long seq, final long tag, final OpDescriptor desc, final int length)
    {
        control(peer, commId, seq, RTS, tag, length, desc);
    }

    /**
     * Tells a sender that the receive of its message is posted.
     *
     * @param peer   the sender, in the root communicator.
     * @param commId the communicator.
     * @param seq    the message's sequence number.
     * @param tag    the message's tag.
     */
    void clearToSend(final int peer, final long commId, final long seq, final long tag)
    {
        control(peer, commId, seq, CTS, tag, 0, CONTROL_DESC);
    }

    /**
     * Sends a message on the link to {@code peer}, eagerly: the caller took its credit or it goes after a CTS.
     */
    void send(
        final int peer, final long commId, final long seq, final long tag, final OpDescriptor desc,
        final ByteBuffer payload, final Request done)
    {
        traffic.sent(peer, payload.remaining());
        links.apply(peer).send(commId, seq, tag, desc, payload, done);
    }

    /**
     * Tells a peer, best effort, that this rank's communicator {@code commId} failed or does not exist.
     */
    void abort(final int peer, final long commId, final String reason)
    {
        final IntFunction<Link> l = links;
        if (l != null)
        {
            try
            {
                l.apply(peer).abort(commId, reason);
            }
            catch (final RuntimeException ignore)
            {
                // the link is gone: the peer learns of it that way
            }
        }
    }

    /**
     * Asks a peer where it is in a communicator; it answers with {@link #POSITION}.
     *
     * @param peer   the peer, in the root communicator.
     * @param commId the communicator.
     */
    void askPosition(final int peer, final long commId)
    {
        control(peer, commId, 0, POSITION_QUERY, 0, 0, CONTROL_DESC);
    }

    /**
     * Tells a peer where this rank is in a communicator.
     *
     * @param peer     the peer, in the root communicator.
     * @param commId   the communicator.
     * @param position where this rank is.
     */
    void tellPosition(final int peer, final long commId, final Position position)
    {
        final ByteBuffer payload = ByteBuffer.allocate(POSITION_BYTES);
        payload.putLong(16, position.issued()).putLong(24, position.completed());
        control(peer, commId, position.seq(), POSITION, position.waitingFor(), position.waitedMillis(),
            position.idle() ? CONTROL_DESC : position.desc(), payload);
    }

    /**
     * Tells a peer, at close, one of the last collectives this rank issued.
     *
     * @param peer   the peer, in the root communicator.
     * @param commId the communicator.
     * @param seq    the collective's sequence number, or -1 when none was issued.
     * @param desc   the collective, or null when none was issued.
     * @param count  collectives issued in all.
     * @param hash   their hash, in order.
     */
    void tellClosing(
        final int peer, final long commId, final long seq, final OpDescriptor desc, final long count, final long hash)
    {
        control(peer, commId, seq, CLOSING, count, hash, desc == null ? CONTROL_DESC : desc);
    }

    private void control(
        final int peer, final long commId, final long seq, final int kind, final long tag, final long value,
        final OpDescriptor desc)
    {
        control(peer, commId, seq, kind, tag, value, desc, ByteBuffer.allocate(CONTROL_BYTES));
    }

    /** Sends a control message whose payload starts with {@code tag} and {@code value} (the rest is filled in). */
    private void control(
        final int peer, final long commId, final long seq, final int kind, final long tag, final long value,
        final OpDescriptor desc, final ByteBuffer payload)
    {
        payload.putLong(0, tag).putLong(8, value);
        traffic.sent(peer, payload.remaining());
        try
        {
            // A control message that cannot go fails with its link, which fails the communicators that need it.
            links.apply(peer).send(commId, seq, Tags.of(Tags.CONTROL_PHASE, kind, 0), desc, payload,
                new Request(peer, true, tag));
        }
        catch (final RuntimeException ignore)
        {
            // as above: the link's failure is what the communicators hear of
        }
    }

    /**
     * Collects a control message's payload, then hands it on.
     */
    static final class ControlSink implements dev.hccl.api.spi.MessageSink
    {
        private final ByteBuffer bytes;
        private final Handler handler;

        ControlSink(final int length, final Handler handler)
        {
            this.bytes = ByteBuffer.allocate(length);
            this.handler = handler;
        }

        @Override
        public void write(final ByteBuffer chunk)
        {
            final int n = Math.min(chunk.remaining(), bytes.remaining());
            bytes.put(bytes.position(), chunk, chunk.position(), n);
            bytes.position(bytes.position() + n);
            chunk.position(chunk.position() + n);
        }

        @Override
        public void complete()
        {
            handler.on(bytes.getLong(0), bytes.getLong(8), bytes);
        }
    }

    /**
     * How long a control message of a kind is.
     *
     * @param kind the kind.
     * @return its payload's bytes.
     */
    static int lengthOf(final int kind)
    {
        return kind == POSITION ? POSITION_BYTES : CONTROL_BYTES;
    }

    /** What a control message's payload is for. */
    @FunctionalInterface
    interface Handler
    {
        /**
         * @param tag     the payload's first long.
         * @param value   its second.
         * @param payload the whole payload, for a kind that carries more ({@link #POSITION}).
         */
        void on(long tag, long value, ByteBuffer payload);
    }
}
