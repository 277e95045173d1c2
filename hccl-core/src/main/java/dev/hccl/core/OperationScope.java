package dev.hccl.core;

import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.WaitPolicy;
import dev.hccl.core.mailbox.Position;

import java.nio.ByteBuffer;

/**
 * What an operation sees of its communicator, and all it may reach: who the ranks are, its messages, its waits and
 * their bounds, the failure state, and its scratch memory. {@link Operations}, {@link OpExecutor} and
 * {@link OpContext} hold this, not the communicator, so that the arrows inside hccl-core run one way.
 */
interface OperationScope
{
    /** @return this rank. */
    int rank();

    /** @return the communicator's ranks. */
    int worldSize();

    /** @return which node each rank runs on. */
    RankLayout layout();

    /** @return the communicator's messages, both ways, in its own numbering. */
    Wire wire();

    /** @return the transfers waited for now. */
    Whereabouts whereabouts();

    /** @return the communicator's failure state. */
    CommFailure failures();

    /** @return how long one wait may last ({@code HCCL_EXEC_TIMEOUT}). */
    long execTimeoutNanos();

    /** @return what drives the transports while a thread waits. */
    ProgressEngine progressEngine();

    /** @return how a waiting thread spins, yields and parks. */
    WaitPolicy waitPolicy();

    /**
     * The memory this rank shares with the others of its node for the communicator's collectives.
     *
     * @return the arena, its members being this communicator's ranks; null when it has none (only the root
     * communicator may have one: two communicators' operations run at once, one arena's do not).
     */
    NodeArena nodeArena();

    /**
     * Scratch memory of the running operation.
     *
     * @param slot  which of the slots.
     * @param bytes at least this many.
     * @return the buffer, reused from operation to operation.
     */
    ByteBuffer scratch(int slot, int bytes);

    /** @return bytes per message segment ({@code HCCL_SEGMENT_SIZE}). */
    int segmentBytes();

    /**
     * Asks every peer where it is, for a wait that ran out: which rank is at fault.
     *
     * @param mine    where this rank is.
     * @param driving whether the calling thread drives the transports meanwhile.
     * @return the finding.
     */
    PositionSurvey.Finding survey(Position mine, boolean driving);

    /** The stall watch reported a wait of this communicator ({@link Watchdog}): counted in its metrics. */
    void stallReported();
}
