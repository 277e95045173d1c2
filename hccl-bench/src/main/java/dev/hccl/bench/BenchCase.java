package dev.hccl.bench;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

/**
 * One sweep over the sizes: a type, a reduction and a root, as one call of nccl-tests' {@code TimeTest}.
 *
 * @param type  the element type, or null for barrier.
 * @param op    the reduction, or null for operations without one.
 * @param root  the root, or -1 for operations without one.
 */
public record BenchCase(DataType type, ReduceOp op, int root)
{
    /**
     * Bytes per element.
     *
     * @return the type's size, or 1 for barrier.
     */
    public int elementSize()
    {
        return type == null ? 1 : type.size();
    }
}
