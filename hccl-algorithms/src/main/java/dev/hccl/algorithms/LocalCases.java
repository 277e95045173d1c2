package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.spi.PeerGroup;

import java.nio.ByteBuffer;

/**
 * The cases every all-reduce handles without a message: one rank, or nothing to reduce.
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
}
