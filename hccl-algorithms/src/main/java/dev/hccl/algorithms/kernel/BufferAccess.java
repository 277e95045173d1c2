package dev.hccl.algorithms.kernel;

import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;

/**
 * Resolves a {@link ByteBuffer} and an absolute index to the {@code (base, offset)} pair that Unsafe accessors take,
 * once per call, so that kernel loops see only plain memory addresses.
 * <p>
 * Every kind of buffer resolves: direct buffers (read-only or not) to {@code (null, address + index)}; heap buffers to
 * {@code (array, ARRAY_BASE_OFFSET + arrayOffset + index)}. Read-only heap buffers hide their array behind
 * {@link ByteBuffer#hasArray()}, so their array is read through Agrona's {@link BufferUtil#array(ByteBuffer)}; that is
 * only ever used to read, never to write, since {@link #checkWritable(ByteBuffer)} refuses read-only
 * destinations first.
 */
final class BufferAccess
{
    private BufferAccess()
    {
    }

    /**
     * The base object for Unsafe access to the buffer's memory.
     *
     * @param buffer the buffer.
     * @return null for a direct buffer, else the backing array.
     */
    static Object base(final ByteBuffer buffer)
    {
        if (buffer.isDirect())
        {
            return null;
        }
        return buffer.hasArray() ? buffer.array() : BufferUtil.array(buffer);
    }

    /**
     * The Unsafe offset of the byte at an absolute index of the buffer, relative to {@link #base(ByteBuffer)}.
     *
     * @param buffer the buffer.
     * @param index  absolute byte index, already bounds-checked.
     * @return the address (direct) or array offset (heap) of that byte.
     */
    static long offset(final ByteBuffer buffer, final int index)
    {
        if (buffer.isDirect())
        {
            return BufferUtil.address(buffer) + index;
        }
        final int arrayOffset = buffer.hasArray() ? buffer.arrayOffset() : BufferUtil.arrayOffset(buffer);
        return BufferUtil.ARRAY_BASE_OFFSET + arrayOffset + index;
    }

    /**
     * Refuses to write into a read-only buffer: Unsafe would write into it without complaint.
     *
     * @param buffer the destination.
     * @throws ReadOnlyBufferException if the buffer is read-only.
     */
    static void checkWritable(final ByteBuffer buffer)
    {
        if (buffer.isReadOnly())
        {
            throw new ReadOnlyBufferException();
        }
    }

    /**
     * Checks that {@code [index, index + length)} lies within {@code [0, limit)} of the buffer. Unsafe access has no
     * bounds check of its own: a bad index would corrupt memory or crash the JVM instead of throwing.
     *
     * @param buffer the buffer.
     * @param index  absolute byte index of the first byte.
     * @param length bytes, as a long so that {@code count * elementSize} cannot overflow.
     * @param name   the argument's name, for the message.
     * @throws IndexOutOfBoundsException if the range is not inside the buffer.
     */
    static void checkRange(final ByteBuffer buffer, final int index, final long length, final String name)
    {
        final int limit = buffer.limit();
        if (index < 0 || length < 0 || index + length > limit)
        {
            throw new IndexOutOfBoundsException(
                name + ": range [" + index + ", " + index + " + " + length + ") out of bounds for limit " + limit);
        }
    }
}
