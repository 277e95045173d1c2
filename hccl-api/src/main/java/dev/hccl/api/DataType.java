package dev.hccl.api;

/**
 * Element types a collective can carry, as in {@code HcclDataType} and {@code ncclDataType_t}.
 * <p>
 * Elements are laid out in native (little-endian on every supported platform) byte order.
 */
public enum DataType
{
    /** Signed 8-bit integer. */
    INT8(0, 1, false),
    /** Unsigned 8-bit integer. */
    UINT8(1, 1, false),
    /** Signed 16-bit integer. */
    INT16(2, 2, false),
    /** Signed 32-bit integer. */
    INT32(3, 4, false),
    /** Signed 64-bit integer. */
    INT64(4, 8, false),
    /** IEEE 754 binary16. */
    FP16(5, 2, true),
    /** bfloat16: the upper half of an IEEE 754 binary32. */
    BF16(6, 2, true),
    /** IEEE 754 binary32. */
    FP32(7, 4, true),
    /** IEEE 754 binary64. */
    FP64(8, 8, true),
    /**
     * OCP 8-bit float E4M3 (NCCL's {@code ncclFloat8e4m3}): no infinities, NaN {@code S.1111.111}, largest finite 448.
     * Reductions widen to {@code float}, combine there and round back to nearest even, saturating at the largest
     * finite; see {@link Fp8Floats}.
     */
    FP8_E4M3(9, 1, true),
    /**
     * OCP 8-bit float E5M2 (NCCL's {@code ncclFloat8e5m2}): IEEE-style infinities and NaNs, largest finite 57344.
     * Reductions widen to {@code float}, combine there and round back to nearest even, saturating at the largest
     * finite (as NCCL does, an infinite result too); see {@link Fp8Floats}.
     */
    FP8_E5M2(10, 1, true);

    /** By wire code. */
    private static final DataType[] BY_CODE = WireCodes.index(values(), DataType::code, new DataType[255]);

    private final int code;

    private final int size;
    private final boolean floatingPoint;

    DataType(final int code, final int size, final boolean floatingPoint)
    {
        this.code = code;
        this.size = size;
        this.floatingPoint = floatingPoint;
    }

    /**
     * Size of one element.
     *
     * @return bytes per element.
     */
    public int size()
    {
        return size;
    }

    /**
     * Whether the type is a floating-point type (and so supports {@link ReduceOp#AVG}).
     *
     * @return true for FP16, BF16, FP32, FP64 and the two FP8 types.
     */
    public boolean isFloatingPoint()
    {
        return floatingPoint;
    }

    /**
     * The number that stands for this type on the wire, fixed once given: never reuse or renumber one.
     *
     * @return 0 to 254.
     */
    public int code()
    {
        return code;
    }

    /**
     * The type a wire code stands for.
     *
     * @param code a code, as read from a peer.
     * @return the type, or null when no type has that code.
     */
    public static DataType fromCode(final int code)
    {
        return WireCodes.find(BY_CODE, code);
    }
}
