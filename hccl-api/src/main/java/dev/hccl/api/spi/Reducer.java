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
     * Bytes per element.
     *
     * @return the element size.
     */
    int elementSize();
}
