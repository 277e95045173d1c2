package dev.hccl.core.op;

import dev.hccl.api.HcclException;

import java.util.List;

/**
 * What the operation path tells of its operations, and of its communicator's failure; the flight recorder, the
 * metrics and JFR events, and the dumps subscribe, so that the path knows none of them. Every event is fired on the
 * thread that does the work, inline: a listener must be quick and must not call back into the communicator. An
 * operation's events come in order: {@link #issued}, then {@link #started} unless it failed before it could start
 * (the communicator had failed), then {@link #ended} before its future completes.
 */
public interface OpListener
{
    /** Hears nothing. */
    OpListener NONE = new OpListener()
    {
    };

    /**
     * An operation was numbered; it is queued, or about to run.
     *
     * @param op the operation.
     */
    default void issued(final OpRecord op)
    {
    }

    /**
     * An operation started: a collective begins its algorithm (chosen during the run: {@link OpRecord#algorithm()}
     * holds it at {@link #ended}); a send or receive posts its transfers.
     *
     * @param op the operation.
     */
    default void started(final OpRecord op)
    {
    }

    /**
     * An operation completed, or failed ({@link OpRecord#failure()}); {@link OpRecord#peerWaitNanos()} says how long
     * it waited for its peers.
     *
     * @param op the operation.
     */
    default void ended(final OpRecord op)
    {
    }

    /**
     * The communicator failed, once the peers have been told and the waits failed; fired once, for the first failure.
     *
     * @param failure the communicator's failure.
     * @param relayed whether it passes on a peer's own failure (the peer's is the root cause).
     */
    default void failed(final HcclException failure, final boolean relayed)
    {
    }

    /**
     * One listener that tells each of these, in order.
     *
     * @param listeners the subscribers.
     * @return the listener.
     */
    static OpListener all(final List<? extends OpListener> listeners)
    {
        final OpListener[] each = listeners.toArray(new OpListener[0]);
        return new OpListener()
        {
            @Override
            public void issued(final OpRecord op)
            {
                for (final OpListener l : each)
                {
                    l.issued(op);
                }
            }

            @Override
            public void started(final OpRecord op)
            {
                for (final OpListener l : each)
                {
                    l.started(op);
                }
            }

            @Override
            public void ended(final OpRecord op)
            {
                for (final OpListener l : each)
                {
                    l.ended(op);
                }
            }

            @Override
            public void failed(final HcclException failure, final boolean relayed)
            {
                for (final OpListener l : each)
                {
                    l.failed(failure, relayed);
                }
            }
        };
    }
}
