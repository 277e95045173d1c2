package dev.hccl.api;

/**
 * Element types a collective can carry, as in {@code HcclDataType} and {@code ncclDataType_t}.
 * <p>
 * Elements are laid out in native (little-endian on every supported platform) byte order.
 */
public enum DataType
{
    /** Signed 8-bit integer. */
    INT8(1, false),
    /** Unsigned 8-bit integer. */
    UINT8(1, false),
    /** Signed 16-bit integer. */
    INT16(2, false),
    /** Signed 32-bit integer. */
    INT32(4, false),
    /** Signed 64-bit integer. */
    INT64(8, false),
    /** IEEE 754 binary16. */
    FP16(2, true),
    /** bfloat16: the upper half of an IEEE 754 binary32. */
    BF16(2, true),
    /** IEEE 754 binary32. */
    FP32(4, true),
    /** IEEE 754 binary64. */
    FP64(8, true);

    private static final DataType[] VALUES = values();

    private final int size;
    private final boolean floatingPoint;

    DataType(final int size, final boolean floatingPoint)
    {
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
     * @return true for FP16, BF16, FP32 and FP64.
     */
    public boolean isFloatingPoint()
    {
        return floatingPoint;
    }

    /**
     * The type with the given {@link #ordinal()}, as carried on the wire.
     *
     * @param ordinal the ordinal.
     * @return the type.
     * @throws IllegalArgumentException if no type has that ordinal.
     */
    public static DataType fromOrdinal(final int ordinal)
    {
        if (ordinal < 0 || ordinal >= VALUES.length)
        {
            throw new IllegalArgumentException("no DataType with ordinal " + ordinal);
        }
        return VALUES[ordinal];
    }
}
