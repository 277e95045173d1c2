package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.spi.PeerGroup;

import java.nio.ByteBuffer;

/**
 * The cases every all-reduce, all-gather and reduce-scatter handles without a message: one rank, or no elements.
 */
final class LocalCases
{
    private LocalCases()
    {
    }

    /**
     * Finishes an all-reduce that needs no message, leaving the input in the output.
     *
     * @param group the ranks.
     * @param send  the input.
     * @param recv  the output; may be {@code send}.
     * @param count elements.
     * @param bytes bytes of {@code count} elements.
     * @return true when done here; false when the algorithm must run.
     */
    static boolean allReduceDone(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int count, final int bytes)
    {
        if (group.size() > 1 && count > 0)
        {
            return false;
        }
        if (send != recv)
        {
            Copies.copy(recv, 0, send, 0, bytes);
        }
        return true;
    }

    /**
     * Finishes an all-gather that needs no message, leaving this rank's block at its place in the output, as
     * {@link RingAlgorithm#allGather} does (a no-op in place, where {@code send} is that block).
     *
     * @param group     the ranks.
     * @param send      this rank's block.
     * @param recv      all blocks.
     * @param sendCount elements per block.
     * @param type      element type.
     * @return true when done here; false when the algorithm must run.
     */
    static boolean allGatherDone(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int sendCount, final DataType type)
    {
        if (group.size() > 1 && sendCount > 0)
        {
            return false;
        }
        final int blockBytes = sendCount * type.size();
        Copies.copy(recv, group.rank() * blockBytes, send, 0, blockBytes);
        return true;
    }

    /**
     * Finishes a reduce-scatter that needs no message, leaving this rank's block of the input in the output, as
     * {@link RingAlgorithm#reduceScatter} does (a no-op in place, where {@code recv} is that block).
     *
     * @param group     the ranks.
     * @param send      all blocks.
     * @param recv      this rank's block.
     * @param recvCount elements per block.
     * @param type      element type.
     * @return true when done here; false when the algorithm must run.
     */
    static boolean reduceScatterDone(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int recvCount, final DataType type)
    {
        if (group.size() > 1 && recvCount > 0)
        {
            return false;
        }
        final int blockBytes = recvCount * type.size();
        Copies.copy(recv, 0, send, group.rank() * blockBytes, blockBytes);
        return true;
    }
}
