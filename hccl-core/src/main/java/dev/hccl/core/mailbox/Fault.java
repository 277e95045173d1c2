package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;

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

    /**
     * A transfer that a transport failed, read as {@link #transportCode} and {@link #transportDetail} read it.
     *
     * @param globalPeer the transfer's peer, in the root communicator.
     * @param transfer   the transfer, in words ({@code send to {peer} tag ...}).
     * @param thrown     what the transport failed it with.
     * @return the fault, with {@code thrown} as cause.
     */
    public static Fault ofTransfer(final int globalPeer, final String transfer, final Throwable thrown)
    {
        return new Fault(transportCode(thrown), globalPeer, transfer + " failed: " + transportDetail(thrown), thrown,
            false);
    }

    /**
     * @param thrown what a transport failed a transfer or a link with.
     * @return its code; a transport's exception that names none (an I/O error) is a lost connection.
     */
    static ErrorCode transportCode(final Throwable thrown)
    {
        return thrown instanceof HcclException h ? h.errorCode() : ErrorCode.E_TCP_TRANSFER;
    }

    /**
     * @param thrown what a transport failed a transfer or a link with.
     * @return what happened, in words, without the code and rank the user's exception states again.
     */
    static String transportDetail(final Throwable thrown)
    {
        return thrown instanceof HcclException h ? h.detail() : String.valueOf(thrown);
    }
}
