package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * An all-gather schedule for blocks of different sizes ({@code allGatherV}).
 */
public interface AllGatherVAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs an all-gather of variable blocks. Writes no byte of {@code recv} outside the blocks.
     *
     * @param group      the ranks.
     * @param send       this rank's block, {@code recvCounts[rank]} elements from byte 0; may be this rank's block of
     *                   {@code recv} (in place), and may overlap {@code recv} elsewhere: it is read before any byte
     *                   of {@code recv} is written.
     * @param recv       all blocks, at their displacements from byte 0.
     * @param recvCounts elements of each rank's block; the same on every rank.
     * @param recvDispls where each block starts in {@code recv}, in elements; the blocks do not overlap.
     * @param type       element type.
     */
    void allGatherV(
        PeerGroup group, ByteBuffer send, ByteBuffer recv, int[] recvCounts, int[] recvDispls, DataType type);
}
