package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * A reduce schedule.
 */
public interface ReduceAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs a reduce.
     *
     * @param group   the ranks.
     * @param send    input, from byte 0; not modified unless it is {@code recv}.
     * @param recv    output at the root, from byte 0; ignored elsewhere.
     * @param count   elements.
     * @param type    element type.
     * @param reducer the kernel.
     * @param root    the receiver.
     */
    void reduce(PeerGroup group, ByteBuffer send, ByteBuffer recv, int count, DataType type, Reducer reducer, int root);
}
