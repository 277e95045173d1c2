package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * A reduce-scatter schedule.
 */
public interface ReduceScatterAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs a reduce-scatter.
     *
     * @param group     the ranks.
     * @param send      all blocks, from byte 0; not modified.
     * @param recv      this rank's block of the result, from byte 0.
     * @param recvCount elements per block.
     * @param type      element type.
     * @param reducer   the kernel.
     */
    void reduceScatter(PeerGroup group, ByteBuffer send, ByteBuffer recv, int recvCount, DataType type, Reducer reducer);
}
