package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;

/**
 * Told by a {@link Mailbox} when something on the wire makes the communicator's current operation impossible.
 */
public interface FaultListener
{
    /**
     * A fault: the communicator must fail.
     *
     * @param code       the category.
     * @param globalPeer the rank at fault, in the root communicator, or -1.
     * @param message    what happened; {@code {peer}} stands for the peer's name in the communicator.
     */
    void onFault(ErrorCode code, int globalPeer, String message);
}
