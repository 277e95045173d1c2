package dev.hccl.api.spi;

/**
 * A barrier schedule.
 */
public interface BarrierAlgorithm
{
    /**
     * The algorithm's name.
     *
     * @return the name.
     */
    String name();

    /**
     * Returns once every rank has entered.
     *
     * @param group the ranks.
     */
    void barrier(PeerGroup group);
}
