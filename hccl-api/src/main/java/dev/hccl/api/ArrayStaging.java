package dev.hccl.api;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The direct buffer that {@link Communicator}'s array conveniences stage an array in.
 */
final class ArrayStaging
{
    private ArrayStaging()
    {
    }

    /**
     * A direct, native-order buffer for {@code length} elements of {@code type}.
     *
     * @param data   the array, checked for null.
     * @param length its length.
     * @param type   its element type.
     * @return the buffer.
     * @throws IllegalArgumentException when {@code data} is null or over 2 GiB.
     */
    static ByteBuffer buffer(final Object data, final int length, final DataType type)
    {
        if (null == data)
        {
            throw new IllegalArgumentException("data must not be null");
        }
        final long bytes = (long)length * type.size();
        if (bytes > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("data is over 2 GiB, the most a ByteBuffer holds");
        }
        return ByteBuffer.allocateDirect((int)bytes).order(ByteOrder.nativeOrder());
    }
}
