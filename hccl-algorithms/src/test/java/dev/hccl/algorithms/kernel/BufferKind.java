package dev.hccl.algorithms.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The kinds of buffer a kernel must accept, each built around the same bytes so that tests can compare results.
 */
enum BufferKind
{
    /** A direct buffer. */
    DIRECT(false),
    /** A heap buffer whose array starts at offset 0. */
    HEAP(false),
    /** A heap buffer sliced out of a larger array: {@code arrayOffset() != 0}. */
    HEAP_SLICE(false),
    /** A direct buffer sliced out of a larger one: its address is not the allocation's. */
    DIRECT_SLICE(false),
    /** A read-only view of a heap buffer: {@code hasArray()} is false. */
    READ_ONLY_HEAP(true),
    /** A read-only view of a direct buffer. */
    READ_ONLY_DIRECT(true);

    /** Kinds a destination can be. */
    static final BufferKind[] WRITABLE = { DIRECT, HEAP, HEAP_SLICE, DIRECT_SLICE };

    private final boolean readOnly;

    BufferKind(final boolean readOnly)
    {
        this.readOnly = readOnly;
    }

    boolean readOnly()
    {
        return readOnly;
    }

    /**
     * A buffer of this kind holding a copy of {@code content}, with capacity and limit {@code content.length}, in big
     * endian order (the default) so that kernels cannot depend on the buffer's order setting, and with a non-zero
     * position so that tests can check that absolute indices ignore it.
     */
    ByteBuffer of(final byte[] content)
    {
        final ByteBuffer buffer;
        switch (this)
        {
            case DIRECT, READ_ONLY_DIRECT -> buffer = ByteBuffer.allocateDirect(content.length);
            case HEAP, READ_ONLY_HEAP -> buffer = ByteBuffer.allocate(content.length);
            case HEAP_SLICE -> buffer = ByteBuffer.allocate(content.length + 11).position(11).slice();
            case DIRECT_SLICE -> buffer = ByteBuffer.allocateDirect(content.length + 13).position(13).slice();
            default -> throw new IllegalStateException();
        }
        buffer.put(0, content, 0, content.length);
        buffer.order(ByteOrder.BIG_ENDIAN).position(Math.min(2, content.length));
        return readOnly ? buffer.asReadOnlyBuffer() : buffer;
    }

    /**
     * The whole content of a buffer, read by absolute index without touching its position.
     */
    static byte[] bytes(final ByteBuffer buffer)
    {
        final byte[] content = new byte[buffer.capacity()];
        for (int i = 0; i < content.length; i++)
        {
            content[i] = buffer.get(i);
        }
        return content;
    }
}
