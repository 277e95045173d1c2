package dev.hccl.core.op;

import dev.hccl.algorithms.ScratchBuffers;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.WaitPolicy;

import java.nio.ByteBuffer;

/**
 * What an operation sees of its communicator, and all it may reach, fixed when the communicator is made:
 * {@link Operations}, {@link OpExecutor} and {@link OpContext} hold this value, not the communicator, so that the
 * operation path never calls back up into what assembled it.
 *
 * @param rank             this rank.
 * @param worldSize        the communicator's ranks.
 * @param layout           which node each rank runs on.
 * @param wire             the communicator's messages, both ways, in its own numbering.
 * @param whereabouts      the transfers waited for now.
 * @param failures         the communicator's failure state.
 * @param execTimeoutNanos how long one wait may last ({@code HCCL_EXEC_TIMEOUT}).
 * @param progressEngine   what drives the transports while a thread waits, or null.
 * @param waitPolicy       how a waiting thread spins, yields and parks.
 * @param nodeArena        the memory this rank shares with the others of its node for the communicator's collectives,
 *                         its members being this communicator's ranks; null when it has none (only the root
 *                         communicator may have one: two communicators' operations run at once, one arena's do not).
 * @param scratchBuffers   the running operation's scratch memory, reused from operation to operation.
 * @param segmentBytes     bytes per message segment ({@code HCCL_SEGMENT_SIZE}).
 * @param survey           asks the peers where they are, for a wait that ran out.
 * @param listener         told of each operation and of the failure.
 */
public record OpScope(
    int rank, int worldSize, RankLayout layout, Wire wire, Whereabouts whereabouts, CommFailure failures,
    long execTimeoutNanos, ProgressEngine progressEngine, WaitPolicy waitPolicy, NodeArena nodeArena,
    ScratchBuffers scratchBuffers, int segmentBytes, PositionSurvey survey, OpListener listener)
{
    /** The scratch slot that inputs overlapping their outputs are staged in, after the algorithms' slots. */
    public static final int STAGING_SLOT = PeerGroup.SCRATCH_SLOTS;
    /** The scratch slots a communicator keeps: the algorithms' ({@link PeerGroup#scratch}), then the staging slot. */
    public static final int SCRATCH_SLOTS = STAGING_SLOT + 1;

    /**
     * Scratch memory of the running operation.
     *
     * @param slot  which of the slots.
     * @param bytes at least this many.
     * @return the buffer, reused from operation to operation.
     */
    ByteBuffer scratch(final int slot, final int bytes)
    {
        return scratchBuffers.get(slot, bytes);
    }
}
