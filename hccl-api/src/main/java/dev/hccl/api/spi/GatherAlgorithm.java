package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * A gather schedule.
 */
public interface GatherAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs a gather: every rank's {@code send} lands in block {@code rank} of the root's {@code recv}.
     *
     * @param group     the ranks.
     * @param send      this rank's block, {@code sendCount} elements from byte 0; at the root it may be its block
     *                  of {@code recv} (in place) or overlap {@code recv} elsewhere: it is read before any byte of
     *                  {@code recv} is written.
     * @param recv      at the root, {@code size} blocks from byte 0, in rank order; ignored (may be null) elsewhere.
     * @param sendCount elements per block.
     * @param type      element type.
     * @param root      the rank that receives.
     */
    void gather(PeerGroup group, ByteBuffer send, ByteBuffer recv, int sendCount, DataType type, int root);
}
