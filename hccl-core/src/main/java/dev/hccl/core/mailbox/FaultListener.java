package dev.hccl.core.mailbox;

import dev.hccl.api.HcclException;

/**
 * Told by a {@link Mailbox} when something on the wire makes the communicator's current operation impossible. The
 * listener fails the communicator (tells the peers first) and returns its failure; the mailbox then fails its own
 * receives with it. The listener never calls back into the mailbox from inside this call.
 */
@FunctionalInterface
public interface FaultListener
{
    /**
     * A fault: the communicator must fail.
     *
     * @param fault what happened, with its peer and cause.
     * @return the communicator's failure: the fault in the user's terms, or an earlier failure.
     */
    HcclException onFault(Fault fault);
}
