package dev.hccl.api.spi;

/**
 * A barrier schedule.
 */
public interface BarrierAlgorithm extends CollectiveAlgorithm
{
    /**
     * Returns once every rank has entered.
     *
     * @param group the ranks.
     */
    void barrier(PeerGroup group);
}
