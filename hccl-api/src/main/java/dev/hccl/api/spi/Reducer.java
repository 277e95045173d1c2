package dev.hccl.api.spi;

import java.nio.ByteBuffer;

/**
 * A reduction kernel for one data type and operator: {@code dst[i] = dst[i] op src[i]}.
 * <p>
 * Implementations are stateless and thread-safe: transports call them from I/O threads to reduce received bytes
 * straight into the destination.
 */
public interface Reducer
{
    /**
     * Reduces {@code count} elements of {@code src} into {@code dst}. Indices are absolute byte offsets; neither
     * buffer's position or limit changes.
     *
     * @param dst      destination and left operand.
     * @param dstIndex byte offset of the first destination element.
     * @param src      right operand.
     * @param srcIndex byte offset of the first source element.
     * @param count    elements.
     */
    void reduce(ByteBuffer dst, int dstIndex, ByteBuffer src, int srcIndex, int count);

    /**
     * Reduces two operands into a third buffer, {@code dst[i] = left[i] op right[i]}, in one pass where the kernel
     * can: an out-of-place collective's first step, which would otherwise copy its input into its output and reduce
     * there. The result is bit for bit {@link #reduce(ByteBuffer, int, ByteBuffer, int, int)}'s on a copy of
     * {@code left}. {@code left} is either {@code dst}'s range itself or apart from it; {@code right} is apart from
     * it. Indices are absolute byte offsets; no buffer's position or limit changes.
     * <p>
     * This default copies {@code left} into {@code dst} and reduces there.
     *
     * @param dst        destination.
     * @param dstIndex   byte offset of the first destination element.
     * @param left       left operand.
     * @param leftIndex  byte offset of its first element.
     * @param right      right operand.
     * @param rightIndex byte offset of its first element.
     * @param count      elements.
     */
    default void reduce(final ByteBuffer dst, final int dstIndex, final ByteBuffer left, final int leftIndex,
        final ByteBuffer right, final int rightIndex, final int count)
    {
        if (dst != left || dstIndex != leftIndex)
        {
            dst.put(dstIndex, left, leftIndex, count * elementSize());
        }
        reduce(dst, dstIndex, right, rightIndex, count);
    }

    /**
     * Bytes per element.
     *
     * @return the element size.
     */
    int elementSize();
}
