package dev.hccl.algorithms;

import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.CollectiveAlgorithm;

/**
 * An algorithm that can predict its own time from the alpha-beta-gamma model, so that a cost model can choose among
 * the candidates for an operation, size and topology.
 */
public interface CostedAlgorithm extends CollectiveAlgorithm
{
    /**
     * The predicted time of one operation.
     *
     * @param operation the operation; one this algorithm implements.
     * @param worldSize the number of ranks, at least 1.
     * @param bytes     the size nccl-tests reports for the operation: the buffer for all-reduce, broadcast and
     *                  reduce, the whole output of all-gather, the whole input of reduce-scatter.
     * @param cost      the link and reduction parameters.
     * @return seconds.
     * @throws IllegalArgumentException when this algorithm does not implement {@code operation}.
     */
    double predictSeconds(Operation operation, int worldSize, long bytes, CostParameters cost);

    /**
     * The predicted time of one operation on a layout of nodes, with a link class for each level.
     * <p>
     * On one node, the local links' time. Across nodes, unless the algorithm knows its traffic better: every step
     * at the network's latency, and all the ranks of a node sending through its network link at once, so each at
     * {@code 1/mostPerNode} of its bandwidth. That fits schedules whose every step pairs ranks of different nodes
     * (halving-doubling, trees, the one-shot exchange); the ring and the hierarchical algorithm override it.
     *
     * @param operation the operation; one this algorithm implements.
     * @param layout    which node each rank runs on.
     * @param bytes     as for {@link #predictSeconds(Operation, int, long, CostParameters)}.
     * @param links     the parameters of each link class.
     * @return seconds.
     * @throws IllegalArgumentException when this algorithm does not implement {@code operation}.
     */
    default double predictSeconds(
        final Operation operation, final RankLayout layout, final long bytes, final LinkCosts links)
    {
        return layout.nodeCount() == 1 ? predictSeconds(operation, layout.worldSize(), bytes, links.local()) :
            predictSeconds(operation, layout.worldSize(), bytes, links.network().sharedBy(layout.mostPerNode()));
    }

    /**
     * Whether the cost model weighs this algorithm on a layout at all: true unless it would only be another algorithm
     * there (the hierarchical algorithm on one node is its level1 alone).
     *
     * @param layout the ranks' nodes.
     * @return true when it is a candidate there (within its limits, where it can run).
     */
    default boolean weighedOn(final RankLayout layout)
    {
        return true;
    }

    /**
     * Whether the algorithm runs in the node arena ({@link dev.hccl.api.spi.PeerGroup#arena()}): the cost model
     * weighs it only for ranks that share one, and {@code HCCL_ALGO} forcing it elsewhere takes the model's choice.
     *
     * @return false unless the algorithm says otherwise.
     */
    default boolean needsNodeArena()
    {
        return false;
    }

    /**
     * Whether the algorithm can run an operation of this size at all: false where its buffers cannot hold it. The
     * cost model passes it over there, and when {@code HCCL_ALGO} forces this very algorithm (not a composition that
     * runs it as a level), the call falls back to the model's choice.
     *
     * @param operation the operation; one this algorithm implements.
     * @param worldSize the number of ranks.
     * @param bytes     as for {@link #predictSeconds(Operation, int, long, CostParameters)}.
     * @return true unless the algorithm says otherwise.
     */
    default boolean canRun(final Operation operation, final int worldSize, final long bytes)
    {
        return true;
    }
}
