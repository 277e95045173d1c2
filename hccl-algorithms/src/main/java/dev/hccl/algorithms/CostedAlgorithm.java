package dev.hccl.algorithms;

import dev.hccl.api.Operation;

/**
 * An algorithm that can predict its own time from the alpha-beta-gamma model, so that a cost model can choose among
 * the candidates for an operation, size and topology.
 */
public interface CostedAlgorithm
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
}
