package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;

/**
 * Something on the wire that makes a communicator's current operation impossible, as values from where it was found
 * to the user's exception: what kind, which peer, what happened, what the transport threw, and whether a peer's own
 * failure is only being passed on.
 *
 * @param code       the category.
 * @param globalPeer the rank at fault, in the root communicator, or -1 for none.
 * @param message    what happened; {@code {peer}} stands for the peer's name in the communicator.
 * @param cause      what the transport reported (the I/O error of a lost connection, say), or null.
 * @param relayed    true when the peer failed first and said so (its ABORT): this rank's failure follows from the
 *                   peer's, which is the root cause to look for.
 */
public record Fault(ErrorCode code, int globalPeer, String message, Throwable cause, boolean relayed)
{
    /**
     * A fault found here, without a transport's cause.
     *
     * @param code       the category.
     * @param globalPeer the rank at fault, in the root communicator, or -1.
     * @param message    what happened; {@code {peer}} stands for the peer.
     * @return the fault.
     */
    static Fault of(final ErrorCode code, final int globalPeer, final String message)
    {
        return new Fault(code, globalPeer, message, null, false);
    }
}
