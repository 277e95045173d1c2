package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * A scatter schedule.
 */
public interface ScatterAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs a scatter: block {@code j} of the root's {@code send} goes to rank {@code j}'s {@code recv}.
     *
     * @param group     the ranks.
     * @param send      at the root, {@code size} blocks of {@code recvCount} elements from byte 0, in rank order;
     *                  not modified; ignored (may be null) elsewhere.
     * @param recv      this rank's block, from byte 0; at the root it may overlap {@code send}: it is written last.
     * @param recvCount elements per block.
     * @param type      element type.
     * @param root      the rank that sends.
     */
    void scatter(PeerGroup group, ByteBuffer send, ByteBuffer recv, int recvCount, DataType type, int root);
}
