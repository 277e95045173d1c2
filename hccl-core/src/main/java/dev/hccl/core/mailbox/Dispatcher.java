package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The process's {@link Inbound}: routes each incoming message to its communicator's {@link Mailbox}, a peer's abort
 * to the communicator it names, and a lost or closed link to every communicator. One per root communicator, shared
 * with the communicators split from it.
 */
public final class Dispatcher implements Inbound
{
    private final int rootWorldSize;
    private final ConcurrentHashMap<Long, Mailbox> mailboxes = new ConcurrentHashMap<>();
    /** Guarded by this: communicators closed here, whose late messages are dropped. */
    private final Set<Long> closed = new HashSet<>();
    /** Guarded by this: peers whose link is gone, replayed to every mailbox created later. */
    private final List<GonePeer> gonePeers = new ArrayList<>();

    /**
     * A dispatcher for a root communicator of {@code rootWorldSize} ranks.
     *
     * @param rootWorldSize ranks.
     */
    public Dispatcher(final int rootWorldSize)
    {
        this.rootWorldSize = rootWorldSize;
    }

    /**
     * The mailbox of a communicator, created on first use; a new one learns of the peers already gone.
     *
     * @param commId the communicator.
     * @return its mailbox, or null when the communicator was closed here.
     */
    public Mailbox mailbox(final long commId)
    {
        final Mailbox existing = mailboxes.get(commId);
        return existing != null ? existing : create(commId);
    }

    private synchronized Mailbox create(final long commId)
    {
        if (closed.contains(commId))
        {
            return null;
        }
        Mailbox m = mailboxes.get(commId);
        if (m == null)
        {
            // Created and told of gone peers under the same lock as gone() records them: none is missed.
            m = new Mailbox(commId, rootWorldSize);
            for (final GonePeer g : gonePeers)
            {
                m.peerGone(g.peer, g.code, g.reason, g.orderly);
            }
            mailboxes.put(commId, m);
        }
        return m;
    }

    /**
     * Forgets a closed communicator: later messages for it are dropped.
     *
     * @param commId the communicator.
     */
    public synchronized void remove(final long commId)
    {
        closed.add(commId);
        mailboxes.remove(commId);
    }

    @Override
    public MessageSink onMessage(
        final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc, final int length)
    {
        final Mailbox m = fromRank < 0 || fromRank >= rootWorldSize ? null : mailbox(commId);
        return m == null ? Mailbox.DISCARD : m.onMessage(fromRank, seq, tag, desc, length);
    }

    @Override
    public void onLinkFailure(final int peer, final Throwable cause)
    {
        final String reason = "lost its connection to this rank (" +
            (cause instanceof HcclException ? ((HcclException)cause).detail() : String.valueOf(cause)) + ")";
        gone(peer, cause instanceof HcclException ? ((HcclException)cause).errorCode() : ErrorCode.E_TCP_TRANSFER,
            reason, false);
    }

    @Override
    public void onPeerClosed(final int peer)
    {
        gone(peer, ErrorCode.E_REMOTE, "closed its communicator", true);
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

    private void gone(final int peer, final ErrorCode code, final String reason, final boolean orderly)
    {
        if (peer < 0 || peer >= rootWorldSize)
        {
            return;
        }
        synchronized (this)
        {
            gonePeers.add(new GonePeer(peer, code, reason, orderly));
        }
        for (final Mailbox m : mailboxes.values())
        {
            m.peerGone(peer, code, reason, orderly);
        }
    }

    private static final class GonePeer
    {
        final int peer;
        final ErrorCode code;
        final String reason;
        final boolean orderly;

        GonePeer(final int peer, final ErrorCode code, final String reason, final boolean orderly)
        {
            this.peer = peer;
            this.code = code;
            this.reason = reason;
            this.orderly = orderly;
        }
    }
}
