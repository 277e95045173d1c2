package dev.hccl.core.mailbox;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The bytes this rank has sent to and received from each peer over its link, payloads and control messages alike,
 * for {@code hccl-status}: what moves through the node arena is not on a link and not counted here. Counted once per
 * message, by whichever thread sends or receives it. Thread-safe.
 */
public final class LinkTraffic
{
    private final AtomicLongArray sent;
    private final AtomicLongArray received;

    /**
     * @param rootWorldSize ranks in the root communicator.
     */
    LinkTraffic(final int rootWorldSize)
    {
        this.sent = new AtomicLongArray(rootWorldSize);
        this.received = new AtomicLongArray(rootWorldSize);
    }

    void sent(final int peer, final int bytes)
    {
        sent.getAndAdd(peer, bytes);
    }

    void received(final int peer, final int bytes)
    {
        received.getAndAdd(peer, bytes);
    }

    /**
     * @param peer a rank of the root communicator.
     * @return the bytes sent to it so far.
     */
    public long sentTo(final int peer)
    {
        return sent.get(peer);
    }

    /**
     * @param peer a rank of the root communicator.
     * @return the bytes received from it so far.
     */
    public long receivedFrom(final int peer)
    {
        return received.get(peer);
    }
}
