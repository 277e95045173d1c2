package dev.hccl.api.spi;

/**
 * What every operation's algorithm is ({@link AllReduceAlgorithm}, {@link BarrierAlgorithm} and the rest extend it):
 * a schedule with a name, so that a catalog holds algorithms by their type and {@code HCCL_ALGO} can name them.
 */
public interface CollectiveAlgorithm
{
    /**
     * The algorithm's name, as {@code HCCL_ALGO} spells it.
     *
     * @return the name.
     */
    String name();
}
