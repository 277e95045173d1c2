package dev.hccl.api;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The direct buffer that {@link Communicator}'s array conveniences stage an array in: one piece of code for the
 * four array types ({@code float[]}, {@code double[]}, {@code int[]}, {@code long[]}), which the element type follows
 * from.
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

    /**
     * A staging buffer holding a copy of {@code array}.
     *
     * @param array a {@code float[]}, {@code double[]}, {@code int[]} or {@code long[]}, checked for null.
     * @return the buffer, position 0, one element of {@code array} after another.
     * @throws IllegalArgumentException when {@code array} is null or over 2 GiB.
     */
    static ByteBuffer in(final Object array)
    {
        final ByteBuffer b = empty(array);
        if (array instanceof float[] f)
        {
            b.asFloatBuffer().put(f);
        }
        else if (array instanceof double[] d)
        {
            b.asDoubleBuffer().put(d);
        }
        else if (array instanceof int[] i)
        {
            b.asIntBuffer().put(i);
        }
        else
        {
            b.asLongBuffer().put((long[])array);
        }
        return b;
    }

    /**
     * A zeroed staging buffer the size of {@code array}, for a result.
     *
     * @param array one of the four array types, checked for null.
     * @return the buffer.
     * @throws IllegalArgumentException when {@code array} is null or over 2 GiB.
     */
    static ByteBuffer empty(final Object array)
    {
        return buffer(array, length(array), type(array));
    }

    /**
     * Copies a staging buffer back into its array.
     *
     * @param staged the buffer {@link #in} or {@link #empty} made for {@code array}.
     * @param array  the array, filled from the buffer's start.
     */
    static void out(final ByteBuffer staged, final Object array)
    {
        if (array instanceof float[] f)
        {
            staged.asFloatBuffer().get(f);
        }
        else if (array instanceof double[] d)
        {
            staged.asDoubleBuffer().get(d);
        }
        else if (array instanceof int[] i)
        {
            staged.asIntBuffer().get(i);
        }
        else
        {
            staged.asLongBuffer().get((long[])array);
        }
    }

    /**
     * The element type of an array.
     *
     * @param array one of the four array types, or null.
     * @return {@code FP32}, {@code FP64}, {@code INT32} or {@code INT64}; {@code FP32} for null, which
     * {@link #buffer} then rejects.
     */
    static DataType type(final Object array)
    {
        if (array instanceof double[])
        {
            return DataType.FP64;
        }
        if (array instanceof int[])
        {
            return DataType.INT32;
        }
        if (array instanceof long[])
        {
            return DataType.INT64;
        }
        return DataType.FP32;
    }

    /**
     * The length of an array.
     *
     * @param array one of the four array types, or null.
     * @return its length; 0 for null.
     */
    static int length(final Object array)
    {
        return null == array ? 0 : java.lang.reflect.Array.getLength(array);
    }
}
