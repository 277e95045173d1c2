package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * An all-gather schedule.
 */
public interface AllGatherAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs an all-gather.
     *
     * @param group     the ranks.
     * @param send      this rank's block, from byte 0; may lie inside {@code recv} at this rank's block.
     * @param recv      all blocks, from byte 0.
     * @param sendCount elements per block.
     * @param type      element type.
     */
    void allGather(PeerGroup group, ByteBuffer send, ByteBuffer recv, int sendCount, DataType type);
}
