package dev.hccl.core.mailbox;

/**
 * Told by a {@link Mailbox} when something on the wire makes the communicator's current operation impossible.
 */
@FunctionalInterface
public interface FaultListener
{
    /**
     * A fault: the communicator must fail.
     *
     * @param fault what happened, with its peer and cause.
     */
    void onFault(Fault fault);
}
