package dev.hccl.api;

/**
 * Reduction operators, as in {@code HcclReduceOp} and {@code ncclRedOp_t}.
 * <p>
 * Integer arithmetic wraps around on overflow, as it does in C on two's complement machines.
 */
public enum ReduceOp
{
    /** Element-wise sum. */
    SUM,
    /** Element-wise product. */
    PROD,
    /** Element-wise maximum (unsigned comparison for {@link DataType#UINT8}). */
    MAX,
    /** Element-wise minimum (unsigned comparison for {@link DataType#UINT8}). */
    MIN,
    /** Element-wise mean: the sum divided by the world size; floating-point types only. */
    AVG;

    private static final ReduceOp[] VALUES = values();

    /**
     * The operator with the given {@link #ordinal()}, as carried on the wire.
     *
     * @param ordinal the ordinal.
     * @return the operator.
     * @throws IllegalArgumentException if no operator has that ordinal.
     */
    public static ReduceOp fromOrdinal(final int ordinal)
    {
        if (ordinal < 0 || ordinal >= VALUES.length)
        {
            throw new IllegalArgumentException("no ReduceOp with ordinal " + ordinal);
        }
        return VALUES[ordinal];
    }
}
