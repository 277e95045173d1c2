package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;

import java.util.Arrays;

/**
 * Which peers of a root communicator are gone, and how: the one record that the {@link Dispatcher}, every
 * {@link Mailbox} and every {@link Outbox} of the process read. A peer's first departure is the one kept (a peer that
 * closed in good order and whose link then drops stays closed); whether its link was ever lost is kept beside it.
 * <p>
 * Thread-safe. Whoever acts on a departure records it here first and then takes its own lock to look at what it
 * holds for the peer; whoever queues a receive for a message not yet announced, or a send held for a clear to send,
 * looks here under that same lock. Either order of the two finds the work. (A receive matched with a message that has
 * begun to arrive, or with a request to send, is not checked: its bytes are on their way.)
 */
public final class PeerStates
{
    /**
     * How a peer left.
     *
     * @param code    the category of the fault it causes.
     * @param reason  what happened, in words ({@code lost its connection to this rank (...)}).
     * @param orderly true when it closed in good order: a fault only where this rank still waits for it.
     * @param cause   what the transport reported, or null.
     */
    public record Departure(ErrorCode code, String reason, boolean orderly, Throwable cause)
    {
    }

    private final Departure[] departed;
    private final boolean[] lost;

    /**
     * No peer gone yet.
     *
     * @param rootWorldSize ranks of the root communicator.
     */
    public PeerStates(final int rootWorldSize)
    {
        departed = new Departure[rootWorldSize];
        lost = new boolean[rootWorldSize];
    }

    /**
     * Records that a peer is gone.
     *
     * @param peer      the peer, in the root communicator.
     * @param departure how.
     * @return whether this is its first departure, which the mailboxes are to be told of.
     */
    public synchronized boolean depart(final int peer, final Departure departure)
    {
        lost[peer] |= !departure.orderly();
        if (departed[peer] != null)
        {
            return false;
        }
        departed[peer] = departure;
        return true;
    }

    /**
     * How a peer left.
     *
     * @param peer the peer, in the root communicator.
     * @return its first departure, or null while it is there.
     */
    public synchronized Departure departure(final int peer)
    {
        return departed[peer];
    }

    /**
     * Whether a peer is gone.
     *
     * @param peer the peer, in the root communicator.
     * @return true once it left, in good order or not.
     */
    public synchronized boolean isGone(final int peer)
    {
        return departed[peer] != null;
    }

    /**
     * The peers whose link failed without a goodbye.
     *
     * @return ranks of the root communicator, in increasing order.
     */
    public synchronized int[] lost()
    {
        return java.util.stream.IntStream.range(0, lost.length).filter(p -> lost[p]).toArray();
    }

    /**
     * Whether any peer's link failed without a goodbye.
     *
     * @return true if one did.
     */
    public synchronized boolean anyLost()
    {
        for (final boolean l : lost)
        {
            if (l)
            {
                return true;
            }
        }
        return false;
    }

    @Override
    public synchronized String toString()
    {
        return "PeerStates" + Arrays.toString(departed);
    }
}
