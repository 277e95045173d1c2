package dev.hccl.algorithms;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;

/**
 * How a payload travels, as NCCL's protocols (Simple, LL, LL128) are its second tuning axis: the cost model prices
 * the same algorithm differently under each. This enum holds what the format itself fixes (the bytes on the wire per
 * logical byte); what it costs to compute (reduce, convert, select) is measured, and lives in {@link TuningTable}.
 * <p>
 * The logical payload is what the caller means to combine, at the width it is reduced in: the buffer itself for
 * {@link #PLAIN}, FP32 values for {@link #HALF}, {@link #QUARTER}, {@link #SPARSE} and {@link #LOW_RANK}
 * ({@link #logicalBytes}).
 */
public enum WireProtocol
{
    /** The buffer's own elements, as they are: every operation on every type but the 16- and 8-bit float reductions. */
    PLAIN(1.0),
    /**
     * 16-bit floats on the wire: FP16/BF16 reductions, and FP32 gradients that the training helpers compress to
     * FP16 or BF16. Each hop widens to FP32, reduces and narrows again, so a byte reduced costs more than FP32's.
     */
    HALF(0.5),
    /**
     * 8-bit floats on the wire: FP8 reductions (E4M3, E5M2). Each hop widens to FP32, reduces and narrows again, which
     * the kernels do through a table of every pair's result, so a byte reduced costs more than FP32's.
     */
    QUARTER(0.25),
    /**
     * The top-k gradient compression: each rank selects a fraction of its FP32 elements and sends them as
     * (index, value) pairs of 8 bytes through an all-gather; every rank then adds all ranks' pairs into its dense
     * result. Never the selector's choice: the training module prices a top-k step with it. Its factor is per
     * selected element's byte.
     */
    SPARSE(2.0),
    /**
     * The PowerSGD gradient compression: each bucket of FP32 gradients, seen as a near-square matrix, travels as two
     * thin FP32 factors (n x rank and m x rank), each through an all-reduce of its own; every rank then multiplies
     * them out into its dense result. Never the selector's choice: the training module prices a PowerSGD step with
     * it. Its factor is per byte of a factor: they are reduced as FP32.
     */
    LOW_RANK(1.0);

    private final double wireBytesPerLogicalByte;

    WireProtocol(final double wireBytesPerLogicalByte)
    {
        this.wireBytesPerLogicalByte = wireBytesPerLogicalByte;
    }

    /**
     * @return bytes on the wire per byte of logical payload (for {@link #SPARSE}, per byte of the elements sent; for
     *         {@link #LOW_RANK}, per byte of the factors).
     */
    public double wireBytesPerLogicalByte()
    {
        return wireBytesPerLogicalByte;
    }

    /**
     * The protocol a collective takes by itself: {@link #HALF} for a reduction of FP16 or BF16, {@link #QUARTER} for
     * one of FP8, else {@link #PLAIN}. An all-gather or broadcast of 16- or 8-bit floats only moves them, so nothing
     * about it differs from other data of their width.
     *
     * @param operation the collective.
     * @param type      its elements.
     * @return the protocol.
     */
    public static WireProtocol of(final Operation operation, final DataType type)
    {
        final boolean reduces = operation == Operation.ALL_REDUCE || operation == Operation.REDUCE ||
            operation == Operation.REDUCE_SCATTER || operation == Operation.REDUCE_SCATTER_V;
        if (!reduces)
        {
            return PLAIN;
        }
        return switch (type)
        {
            case FP16, BF16 -> HALF;
            case FP8_E4M3, FP8_E5M2 -> QUARTER;
            default -> PLAIN;
        };
    }

    /**
     * The logical payload of a buffer under this protocol: the buffer's bytes for {@link #PLAIN}, its elements as
     * FP32 for the others (an FP16 buffer of {@code b} bytes is {@code 2b} logical bytes under {@link #HALF}, an FP8
     * one {@code 4b} under {@link #QUARTER}).
     *
     * @param bufferBytes the buffer's size, as {@link CostedAlgorithm#predictSeconds} counts it.
     * @param type        the buffer's elements.
     * @return logical bytes.
     */
    public long logicalBytes(final long bufferBytes, final DataType type)
    {
        return this == PLAIN ? bufferBytes : bufferBytes / type.size() * Float.BYTES;
    }

    /**
     * The bytes a logical payload puts on the wire.
     *
     * @param logicalBytes not negative; for {@link #SPARSE}, the bytes of the elements sent; for {@link #LOW_RANK},
     *                     of a factor.
     * @return wire bytes, rounded up.
     */
    public long wireBytes(final long logicalBytes)
    {
        return (long)Math.ceil(logicalBytes * wireBytesPerLogicalByte);
    }
}
