package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * A reduce-scatter schedule for blocks of different sizes ({@code reduceScatterV}).
 */
public interface ReduceScatterVAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs a reduce-scatter of variable blocks: rank {@code j} receives block {@code j} reduced over all ranks.
     *
     * @param group      the ranks.
     * @param send       every block at its displacement, from byte 0; not modified.
     * @param sendCounts elements of each block; the same on every rank.
     * @param sendDispls where each block starts in {@code send}, in elements; the same on every rank.
     * @param recv       this rank's block of the result, {@code sendCounts[rank]} elements from byte 0; may overlap
     *                   {@code send}: it is written last.
     * @param type       element type.
     * @param reducer    the kernel.
     */
    void reduceScatterV(
        PeerGroup group, ByteBuffer send, int[] sendCounts, int[] sendDispls, ByteBuffer recv, DataType type,
        Reducer reducer);
}
