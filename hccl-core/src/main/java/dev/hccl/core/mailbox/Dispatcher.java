package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;

import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The process's {@link Inbound}: routes each incoming message to its communicator's {@link Mailbox}, and each peer
 * failure to every communicator. One per root communicator, shared with the communicators split from it.
 */
public final class Dispatcher implements Inbound
{
    private static final MessageSink DISCARD = new MessageSink()
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

    private final int rootWorldSize;
    private final ConcurrentHashMap<Long, Mailbox> mailboxes = new ConcurrentHashMap<>();
    private final Set<Long> closed = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<Integer, Object[]> gonePeers = new ConcurrentHashMap<>();

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
     * The mailbox of a communicator, created on first use; it learns of peers already gone.
     *
     * @param commId the communicator.
     * @return its mailbox.
     */
    public Mailbox mailbox(final long commId)
    {
        return mailboxes.computeIfAbsent(commId, id ->
        {
            final Mailbox m = new Mailbox(id, rootWorldSize);
            gonePeers.forEach((peer, gone) -> m.peerGone(peer, (ErrorCode)gone[0], (String)gone[1], (Boolean)gone[2]));
            return m;
        });
    }

    /**
     * Forgets a closed communicator: later messages for it are dropped.
     *
     * @param commId the communicator.
     */
    public void remove(final long commId)
    {
        closed.add(commId);
        mailboxes.remove(commId);
    }

    @Override
    public MessageSink onMessage(
        final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc, final int length)
    {
        if (fromRank < 0 || fromRank >= rootWorldSize || closed.contains(commId))
        {
            return DISCARD;
        }
        return mailbox(commId).onMessage(fromRank, seq, tag, desc, length);
    }

    @Override
    public void onLinkFailure(final int peer, final Throwable cause)
    {
        final String reason = "lost its connection to this rank (" +
            (cause instanceof HcclException ? cause.getMessage() : String.valueOf(cause)) + ")";
        gone(peer, cause instanceof HcclException ? ((HcclException)cause).errorCode() : ErrorCode.E_TCP_TRANSFER,
            reason, false);
    }

    @Override
    public void onPeerClosed(final int peer)
    {
        gone(peer, ErrorCode.E_REMOTE, "closed its communicator", true);
    }

    @Override
    public void onAbort(final int peer, final String reason)
    {
        gone(peer, ErrorCode.E_REMOTE, "failed: " + reason, false);
    }

    private void gone(final int peer, final ErrorCode code, final String reason, final boolean orderly)
    {
        if (peer < 0 || peer >= rootWorldSize)
        {
            return;
        }
        gonePeers.putIfAbsent(peer, new Object[]{code, reason, orderly});
        for (final Mailbox m : mailboxes.values())
        {
            m.peerGone(peer, code, reason, orderly);
        }
    }
}
