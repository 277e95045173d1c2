package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Tags;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The process's {@link Inbound}: routes each incoming message to its communicator's {@link Mailbox}, a peer's abort
 * to the communicator it names, and a lost or closed link to every communicator. One per root communicator, shared
 * with the communicators split from it.
 * <p>
 * A message for a communicator that this process never created is refused (dropped, and its sender told through an
 * ABORT naming the id), except while a {@code split} is under way here: a peer that finished the split first may
 * send for the new communicator before this rank has made it, so up to {@link #MAX_EARLY_COMMUNICATORS} such
 * mailboxes are made early, and dropped if no split claims them. Whatever they hold is within the peers' eager
 * budgets ({@link FlowControl}).
 */
public final class Dispatcher implements Inbound
{
    /** Communicators a peer may send for before this process has made them, during a split. */
    static final int MAX_EARLY_COMMUNICATORS = 64;
    /** Communicator ids refused whose senders were told; further messages for them are dropped quietly. */
    private static final int MAX_REFUSALS_TOLD = 1024;
    private static final Logger LOG = LoggerFactory.getLogger(Dispatcher.class);

    private final int rootWorldSize;
    private final FlowControl flow;
    private final ConcurrentHashMap<Long, Mailbox> mailboxes = new ConcurrentHashMap<>();
    /** Guarded by this: communicators closed here, whose late messages are dropped. */
    private final Set<Long> closed = new HashSet<>();
    /** Which peers are gone, read by every mailbox, including those created later. */
    private final PeerStates peers;
    /** Guarded by this: mailboxes made for a peer's message during a split, not yet claimed by a communicator. */
    private final Set<Long> early = new HashSet<>();
    /** Guarded by this: splits under way in this process. */
    private int splitsUnderWay;
    /** Guarded by this: (peer, communicator) pairs already told that the communicator does not exist here. */
    private final Set<List<Long>> refusalsTold = new HashSet<>();

    /**
     * A dispatcher whose peers may send without limit before receives are posted: for tests of matching alone.
     *
     * @param rootWorldSize ranks.
     */
    public Dispatcher(final int rootWorldSize)
    {
        this(rootWorldSize, Integer.MAX_VALUE);
    }

    /**
     * A dispatcher for a root communicator of {@code rootWorldSize} ranks.
     *
     * @param rootWorldSize ranks.
     * @param eagerBudget   bytes each peer may send ahead of this rank's receives ({@code HCCL_EAGER_BUDGET}).
     */
    public Dispatcher(final int rootWorldSize, final int eagerBudget)
    {
        this.rootWorldSize = rootWorldSize;
        this.flow = new FlowControl(rootWorldSize, eagerBudget);
        this.peers = new PeerStates(rootWorldSize);
    }

    /**
     * The flow control of the root communicator's links.
     *
     * @return it.
     */
    public FlowControl flow()
    {
        return flow;
    }

    /**
     * The peers whose link failed without a goodbye.
     *
     * @return ranks of the root communicator, in increasing order.
     */
    public int[] lostPeers()
    {
        return peers.lost();
    }

    /**
     * A split begins in this process: until it ends, a peer may send for a communicator not made here yet.
     */
    public synchronized void splitBegins()
    {
        splitsUnderWay++;
    }

    /**
     * A split has ended (made its communicator, or failed). When none is under way, mailboxes made early that no
     * communicator claimed are dropped: their senders' communicators do not include this rank.
     */
    public void splitEnds()
    {
        final List<Mailbox> unclaimed = new ArrayList<>();
        synchronized (this)
        {
            if (--splitsUnderWay > 0 || early.isEmpty())
            {
                return;
            }
            for (final Long id : early)
            {
                unclaimed.add(mailboxes.remove(id));
                closed.add(id);
            }
            early.clear();
        }
        for (final Mailbox m : unclaimed)
        {
            LOG.warn("dropped messages for communicator {} that no split here made", Long.toHexString(m.commId()));
            m.fail(new HcclException(ErrorCode.E_REMOTE, "no split in this process made communicator " +
                Long.toHexString(m.commId())));
        }
    }

    /**
     * The mailbox of a communicator, created on first use; a new one learns of the peers already gone.
     *
     * @param commId the communicator.
     * @return its mailbox, or null when the communicator was closed here.
     */
    public synchronized Mailbox mailbox(final long commId)
    {
        early.remove(commId); // claimed
        return create(commId);
    }

    /** Under the lock: the mailbox, made if need be; null when the communicator was closed here. */
    private Mailbox create(final long commId)
    {
        if (closed.contains(commId))
        {
            return null;
        }
        Mailbox m = mailboxes.get(commId);
        if (m == null)
        {
            m = new Mailbox(commId, rootWorldSize, flow, peers); // it reads the peers gone already from peers
            mailboxes.put(commId, m);
        }
        return m;
    }

    /**
     * The mailbox a peer's message goes to: an existing one, or one made early during a split; null when the message
     * is to be dropped (a closed communicator, or one refused, whose sender is told).
     */
    private Mailbox mailboxForPeer(final int fromRank, final long commId)
    {
        final Mailbox existing = mailboxes.get(commId);
        if (existing != null)
        {
            return existing;
        }
        final boolean tell;
        synchronized (this)
        {
            if (closed.contains(commId) || mailboxes.containsKey(commId))
            {
                return mailboxes.get(commId);
            }
            // A faster peer may use a split's or a shrink's new communicator first: during a split, or once a peer is
            // lost or a communicator here has failed (the survivors may shrink it; a survivor's abort reaches this
            // rank before its first message for the new communicator, while this rank may not have noticed the lost
            // peer itself yet), such ids get a mailbox early.
            final boolean expecting = splitsUnderWay > 0 || peers.anyLost() ||
                mailboxes.values().stream().anyMatch(Mailbox::hasFailed);
            if (expecting && early.size() < MAX_EARLY_COMMUNICATORS)
            {
                early.add(commId);
                return create(commId);
            }
            tell = refusalsTold.size() < MAX_REFUSALS_TOLD && refusalsTold.add(List.of((long)fromRank, commId));
        }
        if (tell)
        {
            LOG.warn("refused a message from rank {} for communicator {}, which this process never made", fromRank,
                Long.toHexString(commId));
            flow.abort(fromRank, commId, "has no communicator " + Long.toHexString(commId) + " (it never made one " +
                "with that id: the ranks disagree on which communicators exist, or on the members of a split)");
        }
        return null;
    }

    /**
     * Forgets a closed communicator: later messages for it are dropped.
     *
     * @param commId the communicator.
     */
    public synchronized void remove(final long commId)
    {
        closed.add(commId);
        early.remove(commId);
        mailboxes.remove(commId);
    }

    @Override
    public MessageSink onMessage(
        final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc,
        final int length)
    {
        if (fromRank < 0 || fromRank >= rootWorldSize)
        {
            return Mailbox.DISCARD;
        }
        flow.traffic().received(fromRank, length);
        if (Tags.phase(tag) == Tags.CONTROL_PHASE)
        {
            return control(fromRank, commId, seq, tag, desc, length);
        }
        final Mailbox m = mailboxForPeer(fromRank, commId);
        if (m == null)
        {
            if (flow.charge(fromRank, FlowControl.cost(length)))
            {
                flow.released(fromRank, FlowControl.cost(length)); // dropped at once: its credit goes back
            }
            return Mailbox.DISCARD;
        }
        return m.onMessage(fromRank, seq, tag, desc, length);
    }

    /** A flow-control message ({@link FlowControl}): handled once its 16 bytes are in. */
    private MessageSink control(
        final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc,
        final int length)
    {
        final int kind = (int)((tag >>> 32) & 0xFF_FFFF);
        if (kind < FlowControl.RTS || kind > FlowControl.CLOSING || length != FlowControl.lengthOf(kind))
        {
            onLinkFailure(fromRank, new HcclException(ErrorCode.E_INTERNAL, "rank " + fromRank +
                " sent a control message of kind " + kind + " and " + length + " bytes: a protocol error"));
            return Mailbox.DISCARD;
        }
        return new FlowControl.ControlSink(length, (messageTag, value, payload) ->
        {
            if (kind == FlowControl.CREDIT)
            {
                flow.onCredit(fromRank, value);
                return;
            }
            if (kind == FlowControl.RTS)
            {
                final Mailbox m = mailboxForPeer(fromRank, commId);
                if (m != null)
                {
                    m.onRequestToSend(fromRank, seq, messageTag, desc, (int)value);
                }
                return;
            }
            final Mailbox m = mailboxes.get(commId);
            if (m == null)
            {
                return;
            }
            switch (kind)
            {
                case FlowControl.CTS -> m.outbox().onClearToSend(fromRank, seq, messageTag);
                case FlowControl.POSITION_QUERY -> m.positions().onQuery(fromRank);
                case FlowControl.CLOSING -> m.onClosing(fromRank, seq, desc, messageTag, value);
                default -> m.positions().onAnswer(fromRank, new Position(seq, value < 0 ? null : desc,
                    (int)messageTag, value, payload.getLong(16), payload.getLong(24)));
            }
        });
    }

    @Override
    public void onLinkFailure(final int peer, final Throwable cause)
    {
        gone(peer, new PeerStates.Departure(Fault.transportCode(cause),
            "lost its connection to this rank (" + Fault.transportDetail(cause) + ")", false, cause));
    }

    @Override
    public void onPeerClosed(final int peer)
    {
        gone(peer, new PeerStates.Departure(ErrorCode.E_REMOTE, "closed its communicator", true, null));
    }

    @Override
    public void onAbort(final int peer, final long commId, final String reason)
    {
        final Mailbox m = mailboxes.get(commId);
        if (m != null && peer >= 0 && peer < rootWorldSize)
        {
            m.peerAborted(peer, reason);
        }
    }

    private void gone(final int peer, final PeerStates.Departure departure)
    {
        if (peer < 0 || peer >= rootWorldSize || !peers.depart(peer, departure))
        {
            return; // its first departure is the one the mailboxes know
        }
        for (final Mailbox m : mailboxes.values())
        {
            m.peerGone(peer);
        }
    }
}
