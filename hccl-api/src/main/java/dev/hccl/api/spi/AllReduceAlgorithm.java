package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * An all-reduce schedule.
 */
public interface AllReduceAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs an all-reduce.
     *
     * @param group   the ranks.
     * @param send    input, from byte 0; the same object as {@code recv} when in place.
     * @param recv    output, from byte 0.
     * @param count   elements.
     * @param type    element type.
     * @param reducer the kernel.
     */
    void allReduce(PeerGroup group, ByteBuffer send, ByteBuffer recv, int count, DataType type, Reducer reducer);
}
