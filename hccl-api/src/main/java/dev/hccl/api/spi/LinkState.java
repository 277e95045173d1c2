package dev.hccl.api.spi;

import dev.hccl.api.HcclException;

/**
 * The life of a {@link Link}, kept by a transport in one {@code int} so that it can change by compare-and-set: OPEN
 * until exactly one of PEER_CLOSED (the peer said goodbye), FAILED (the connection broke, a protocol error) or
 * CLOSED (this side closed it).
 */
public final class LinkState
{
    /** Carrying messages. */
    public static final int OPEN = 0;
    /** The peer has closed its side, after its last message. */
    public static final int PEER_CLOSED = 1;
    /** The link failed. */
    public static final int FAILED = 2;
    /** This side closed it. */
    public static final int CLOSED = 3;

    private LinkState()
    {
    }

    /**
     * Why a link takes no more messages, for the error a refused send gets.
     *
     * @param state   the link's state, not {@link #OPEN}.
     * @param peer    the rank at the other end.
     * @param failure the link's failure when {@link #FAILED}, else null.
     * @return the reason in words.
     */
    public static String whyNotOpen(final int state, final int peer, final Throwable failure)
    {
        return switch (state)
        {
            case PEER_CLOSED -> "rank " + peer + " has closed its side";
            case FAILED -> "the connection failed" + (null == failure ? "" : ": " + reason(failure));
            default -> "the link is closed";
        };
    }

    /** A failure in words, without an HcclException's code and rank prefix, which the caller's error states. */
    private static String reason(final Throwable failure)
    {
        if (failure instanceof HcclException h)
        {
            return h.detail();
        }
        return null == failure.getMessage() ? failure.toString() : failure.getMessage();
    }
}
