package dev.hccl.core.watch;

import dev.hccl.api.CommMetrics;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.core.mailbox.LinkTraffic;
import dev.hccl.core.op.OpScope;

/**
 * What the observers read of a communicator (its dumps, its status, its stall watch), and all they may: its identity,
 * the scope its operations run in, and its links. The communicator implements it; nothing here reaches back into
 * the operation path beyond the values of {@link OpScope}.
 */
public interface CommView
{
    /** @return the communicator's id. */
    long commId();

    /** @return this rank. */
    int rank();

    /** @return the communicator's ranks. */
    int worldSize();

    /**
     * @return each rank's rank in the job (the root communicator), by rank in this one: a split communicator's rank 1
     *         may be the job's rank 3, and a reader must find that process.
     */
    int[] jobRanks();

    /** @return the name of this rank's host. */
    String hostName();

    /** @return the ranks whose links were lost. */
    int[] lostRanks();

    /** @return the counters now. */
    CommMetrics metrics();

    /** @return what the communicator's operations see: its waits, failure state, survey and bounds. */
    OpScope scope();

    /**
     * The algorithm the communicator would choose for an operation.
     *
     * @param desc the operation.
     * @return its name, or null for operations without a choice.
     */
    String algorithmName(OpDescriptor desc);

    /**
     * @param peer a rank of the communicator, not this one.
     * @return the transport of the link to it, by name.
     */
    String transportTo(int peer);

    /**
     * @param peer a rank of the communicator, not this one.
     * @return how long its link has heard nothing, in milliseconds.
     */
    long silentMillis(int peer);

    /** @return the bytes sent and received on this rank's links. */
    LinkTraffic traffic();
}
