package dev.hccl.api;

/**
 * Reduction operators, as in {@code HcclReduceOp} and {@code ncclRedOp_t}.
 * <p>
 * Integer arithmetic wraps around on overflow, as it does in C on two's complement machines.
 */
public enum ReduceOp
{
    /** Element-wise sum. */
    SUM(0),
    /** Element-wise product. */
    PROD(1),
    /** Element-wise maximum (unsigned comparison for {@link DataType#UINT8}). */
    MAX(2),
    /** Element-wise minimum (unsigned comparison for {@link DataType#UINT8}). */
    MIN(3),
    /**
     * Element-wise mean: the sum divided by the world size; floating-point types only. FP8 divides each rank's input
     * before the sum, as NCCL does, because the sum itself would saturate; the other types divide the sum.
     */
    AVG(4);

    /** By wire code. */
    private static final ReduceOp[] BY_CODE = WireCodes.index(values(), ReduceOp::code, new ReduceOp[255]);

    private final int code;

    ReduceOp(final int code)
    {
        this.code = code;
    }

    /**
     * The number that stands for this operator on the wire, fixed once given: never reuse or renumber one.
     *
     * @return 0 to 254.
     */
    public int code()
    {
        return code;
    }

    /**
     * The operator a wire code stands for.
     *
     * @param code a code, as read from a peer.
     * @return the operator, or null when no operator has that code.
     */
    public static ReduceOp fromCode(final int code)
    {
        return WireCodes.find(BY_CODE, code);
    }
}
