package dev.hccl.core.mailbox;

import dev.hccl.api.spi.OpDescriptor;

/**
 * Where a rank is in a communicator, as it tells a peer that asks: waiting in an operation for a peer, running one, or
 * idle after the last collective it completed.
 *
 * @param seq          the operation's sequence number, or the last completed collective's when idle (-1: none).
 * @param desc         the operation, or null when idle.
 * @param waitingFor   the rank it waits for, in the communicator, or -1.
 * @param waitedMillis how long it has waited, or -1 when idle.
 * @param issued       the sequence number of the last collective it issued (-1: none); ahead of {@code seq} when it
 *                     queued some without waiting.
 * @param completed    the sequence number of the last collective it completed (-1: none).
 */
public record Position(long seq, OpDescriptor desc, int waitingFor, long waitedMillis, long issued, long completed)
{
    /**
     * @return true when the rank runs no operation.
     */
    public boolean idle()
    {
        return waitedMillis < 0;
    }

    @Override
    public String toString()
    {
        if (idle())
        {
            return seq < 0 ? "idle, no collective completed" : "idle after collective #" + seq;
        }
        return waitingFor < 0 ? "running " + desc + " #" + seq :
            "waiting for rank " + waitingFor + " in " + desc + " #" + seq + " for " +
            String.format("%.1f", waitedMillis / 1e3) + " s";
    }
}
