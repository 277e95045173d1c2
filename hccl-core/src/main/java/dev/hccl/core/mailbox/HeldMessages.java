package dev.hccl.core.mailbox;

import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Tags;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The messages of one mailbox that came before their receive: per sender, in order of arrival, each with a buffer of
 * its own (an eager message, within the sender's credit) or none (a request to send, at most
 * {@link FlowControl#MAX_RTS_IN_FLIGHT} per sender). A message dropped from here hands back its credit: the caller
 * collects the eager ones in a list and releases them outside its lock.
 * <p>
 * Not thread-safe: guarded by its mailbox's lock.
 */
final class HeldMessages
{
    private final ArrayList<Unexpected>[] bySender;
    /** Requests to send from each peer that no receive has taken yet. */
    private final int[] requestsToSend;
    /** Messages held, over every sender: most operations begin and end with none, and then look at no list. */
    private int count;

    @SuppressWarnings("unchecked")
    HeldMessages(final int rootWorldSize)
    {
        bySender = new ArrayList[rootWorldSize];
        requestsToSend = new int[rootWorldSize];
        for (int i = 0; i < rootWorldSize; i++)
        {
            bySender[i] = new ArrayList<>();
        }
    }

    /**
     * Takes the message a receive matches, if it came.
     *
     * @param from the sender, in the root communicator.
     * @param seq  the sequence number.
     * @param tag  the tag.
     * @return the message, no longer held; or null.
     */
    Unexpected take(final int from, final long seq, final long tag)
    {
        final ArrayList<Unexpected> waiting = bySender[from];
        for (int i = 0, n = waiting.size(); i < n; i++)
        {
            if (waiting.get(i).matches(seq, tag))
            {
                final Unexpected u = waiting.remove(i);
                count--;
                if (u.rendezvous)
                {
                    requestsToSend[from]--;
                }
                return u;
            }
        }
        return null;
    }

    /**
     * Holds a request to send, within the bound.
     *
     * @param u the request.
     * @return false, holding nothing, when the sender has {@link FlowControl#MAX_RTS_IN_FLIGHT} held already.
     */
    boolean holdRequest(final Unexpected u)
    {
        if (requestsToSend[u.from] >= FlowControl.MAX_RTS_IN_FLIGHT)
        {
            return false;
        }
        requestsToSend[u.from]++;
        bySender[u.from].add(u);
        count++;
        return true;
    }

    /**
     * Holds an eager message, whose credit its sender took.
     *
     * @param u the message.
     */
    void holdMessage(final Unexpected u)
    {
        bySender[u.from].add(u);
        count++;
    }

    /**
     * The first collective message held that cannot be for this rank's operations now that {@code seq} begins.
     *
     * @param seq  the collective that begins.
     * @param desc this rank's operation there.
     * @return the message and the problem, or null.
     */
    Problem firstProblem(final long seq, final OpDescriptor desc)
    {
        if (0 == count)
        {
            return null;
        }
        for (final ArrayList<Unexpected> list : bySender)
        {
            for (final Unexpected u : list)
            {
                final String problem = Tags.phase(u.tag) == Tags.P2P_PHASE ? null :
                    OpFingerprints.heldProblem(u, seq, desc);
                if (problem != null)
                {
                    return new Problem(u, problem);
                }
            }
        }
        return null;
    }

    /**
     * Drops the collective messages of {@code seq}, which no receive took, and describes them.
     *
     * @param seq     the collective that ended.
     * @param dropped where the eager ones go, for their credit.
     * @return what was left, naming the sender and tag, or null.
     */
    String dropLeftovers(final long seq, final List<Unexpected> dropped)
    {
        if (0 == count)
        {
            return null;
        }
        final StringBuilder left = new StringBuilder();
        for (final ArrayList<Unexpected> list : bySender)
        {
            for (final Iterator<Unexpected> it = list.iterator(); it.hasNext(); )
            {
                final Unexpected u = it.next();
                if (u.seq == seq && Tags.phase(u.tag) != Tags.P2P_PHASE)
                {
                    it.remove();
                    count--;
                    forget(u, dropped);
                    left.append(left.length() == 0 ? "" : "; ").append("rank ").append(u.from).append(" sent ")
                        .append(u.length).append(" bytes with tag ").append(Tags.describe(u.tag))
                        .append(" that no receive took");
                }
            }
        }
        return left.length() == 0 ? null : left.toString();
    }

    /**
     * Drops every message held (the communicator failed).
     *
     * @param dropped where the eager ones go, for their credit.
     */
    void dropAll(final List<Unexpected> dropped)
    {
        for (final ArrayList<Unexpected> list : bySender)
        {
            for (final Unexpected u : list)
            {
                forget(u, dropped);
            }
            list.clear();
        }
        count = 0;
    }

    /**
     * A message taken ({@link #take}) that will never be delivered: an eager one goes to {@code dropped} for its
     * credit.
     *
     * @param u       the message.
     * @param dropped the eager messages dropped.
     */
    static void discard(final Unexpected u, final List<Unexpected> dropped)
    {
        if (!u.rendezvous)
        {
            dropped.add(u);
        }
    }

    /** A held message leaves without being taken: a request to send no longer counts, an eager one is dropped. */
    private void forget(final Unexpected u, final List<Unexpected> dropped)
    {
        if (u.rendezvous)
        {
            requestsToSend[u.from]--;
        }
        else
        {
            dropped.add(u);
        }
    }

    /**
     * @return bytes held in buffers, over every sender.
     */
    long bufferedBytes()
    {
        long bytes = 0;
        for (final ArrayList<Unexpected> list : bySender)
        {
            for (final Unexpected u : list)
            {
                bytes += u.rendezvous ? 0 : u.length;
            }
        }
        return bytes;
    }

    /**
     * A held message that cannot be for this rank's operations.
     *
     * @param message the message.
     * @param problem why; {@code {peer}} stands for its sender.
     */
    record Problem(Unexpected message, String problem)
    {
    }
}
