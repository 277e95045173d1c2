package dev.hccl.api.spi;

import dev.hccl.api.DataType;

import java.nio.ByteBuffer;

/**
 * A broadcast schedule.
 */
public interface BroadcastAlgorithm extends CollectiveAlgorithm
{
    /**
     * Runs a broadcast.
     *
     * @param group the ranks.
     * @param buf   the data at the root, the destination elsewhere, from byte 0.
     * @param count elements.
     * @param type  element type.
     * @param root  the sender.
     */
    void broadcast(PeerGroup group, ByteBuffer buf, int count, DataType type, int root);
}
