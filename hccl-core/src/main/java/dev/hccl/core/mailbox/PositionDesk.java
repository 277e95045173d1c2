package dev.hccl.core.mailbox;

import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Where ranks are, over the wire: answers a peer that asks where this rank is in the communicator, and passes the
 * peers' answers to a survey in place (the watchdog's, when an operation stalls). Thread-safe.
 */
public final class PositionDesk
{
    private final long commId;
    private final FlowControl flow;
    /** Where this rank is, for a peer that asks; set by the communicator. */
    private volatile Supplier<Position> whereabouts;
    /** Told of each peer's answer while this rank asks where its peers are; else null. */
    private volatile BiConsumer<Integer, Position> survey;

    PositionDesk(final long commId, final FlowControl flow)
    {
        this.commId = commId;
        this.flow = flow;
    }

    /**
     * Where this rank is, for peers that ask.
     *
     * @param whereabouts this rank's position in the communicator.
     */
    public void answerFrom(final Supplier<Position> whereabouts)
    {
        this.whereabouts = whereabouts;
    }

    /**
     * Asks a peer where it is; its answer goes to the survey in place ({@link #surveyWith}).
     *
     * @param globalPeer the peer, in the root communicator.
     */
    public void ask(final int globalPeer)
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

    /** A peer asks where this rank is (called by a transport thread). */
    void onQuery(final int from)
    {
        final Supplier<Position> w = whereabouts;
        if (w != null)
        {
            flow.tellPosition(from, commId, w.get());
        }
    }

    /** A peer answers where it is (called by a transport thread). */
    void onAnswer(final int from, final Position position)
    {
        final BiConsumer<Integer, Position> s = survey;
        if (s != null)
        {
            s.accept(from, position);
        }
    }
}
