package dev.hccl.bench.check;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;

/**
 * One collective to check: the operation, its type, its reduction, its count and whether it runs in place.
 *
 * @param operation what runs.
 * @param type      element type.
 * @param reduceOp  reduction, or null for operations without one.
 * @param count     the count argument (per rank for allGather, reduceScatter and allToAll).
 * @param inPlace   whether the send and receive buffers are the same memory (NCCL's in-place convention).
 * @param root      the root of broadcast and reduce; ignored elsewhere.
 */
public record CheckCase(Operation operation, DataType type, ReduceOp reduceOp, int count, boolean inPlace, int root)
{
    @Override
    public String toString()
    {
        return operation.displayName() + "(" + type + (reduceOp == null ? "" : ", " + reduceOp) + ", count=" + count +
            (inPlace ? ", in-place" : "") + (operation == Operation.BROADCAST || operation == Operation.REDUCE ?
            ", root=" + root : "") + ")";
    }
}
