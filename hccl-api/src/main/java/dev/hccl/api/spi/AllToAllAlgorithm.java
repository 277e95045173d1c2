package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * An all-to-all schedule.
 */
public interface AllToAllAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs an all-to-all.
     *
     * @param group        the ranks.
     * @param send         the blocks to send, from byte 0; never the same memory as {@code recv}.
     * @param recv         the blocks received, from byte 0.
     * @param countPerRank elements per block.
     * @param type         element type.
     */
    void allToAll(PeerGroup group, ByteBuffer send, ByteBuffer recv, int countPerRank, DataType type);
}
