package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * An all-to-all schedule for blocks of different sizes ({@code allToAllV}).
 */
public interface AllToAllVAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs an all-to-all of variable blocks. Writes no byte of {@code recv} outside the blocks.
     *
     * @param group      the ranks.
     * @param send       the outgoing blocks, at their displacements from byte 0; never overlapping {@code recv}.
     * @param sendCounts elements to each rank; {@code sendCounts[j]} here equals {@code recvCounts[rank]} on rank j.
     * @param sendDispls where each outgoing block starts in {@code send}, in elements.
     * @param recv       the incoming blocks, at their displacements from byte 0.
     * @param recvCounts elements from each rank; {@code recvCounts[rank] == sendCounts[rank]}.
     * @param recvDispls where each incoming block starts in {@code recv}, in elements; the blocks do not overlap.
     * @param type       element type.
     */
    void allToAllV(
        PeerGroup group, ByteBuffer send, int[] sendCounts, int[] sendDispls, ByteBuffer recv, int[] recvCounts,
        int[] recvDispls, DataType type);
}
