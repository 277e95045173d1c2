package dev.hccl.core.op;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.agrona.BufferUtil;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Comparator;

/**
 * Argument checks, run on the caller's thread before anything is queued or sent: a bad argument is an
 * {@link IllegalArgumentException} that names it, and the communicator stays usable.
 */
final class Checks
{
    private Checks()
    {
    }

    static void notNull(final Object value, final String name)
    {
        if (value == null)
        {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }

    static void reduceOp(final ReduceOp op, final DataType type)
    {
        notNull(op, "op");
        if (op == ReduceOp.AVG && !type.isFloatingPoint())
        {
            throw new IllegalArgumentException("op AVG needs a floating-point type, got " + type);
        }
    }

    /**
     * The bytes that {@code count} elements of {@code type} take.
     */
    static int bytes(final String countName, final long count, final DataType type, final int multiplier)
    {
        notNull(type, "type");
        if (count < 0)
        {
            throw new IllegalArgumentException(countName + " must not be negative, got " + count);
        }
        final long bytes = count * type.size() * multiplier;
        if (count > Integer.MAX_VALUE || bytes > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException(countName + " " + count + " x " + type + (multiplier > 1 ?
                " x " + multiplier + " ranks" : "") + " is over 2 GiB, the most a ByteBuffer holds");
        }
        return (int)bytes;
    }

    /**
     * Checks a buffer argument and returns the region the operation uses, as a slice from its position: the buffer
     * itself when it is that region already (position 0, limit and capacity the operation's bytes, native order), as
     * the same memory with the same bounds, so that a call on a buffer of its exact size allocates nothing.
     */
    static ByteBuffer region(
        final String name, final ByteBuffer buffer, final int bytes, final DataType type, final boolean written)
    {
        notNull(buffer, name);
        if (buffer.remaining() < bytes)
        {
            throw new IllegalArgumentException(name + " is too small: needs " + bytes + " bytes from its position, has " +
                buffer.remaining() + " remaining (position " + buffer.position() + ", limit " + buffer.limit() + ")");
        }
        if (written && buffer.isReadOnly())
        {
            throw new IllegalArgumentException(name + " is read-only, but the operation writes into it");
        }
        if (type.size() > 1 && buffer.order() != ByteOrder.nativeOrder())
        {
            throw new IllegalArgumentException(name + " has byte order " + buffer.order() + ", but elements are read " +
                "in native order (" + ByteOrder.nativeOrder() + "): create it with .order(ByteOrder.nativeOrder())");
        }
        if (buffer.position() == 0 && buffer.limit() == bytes && buffer.capacity() == bytes &&
            buffer.order() == ByteOrder.nativeOrder())
        {
            return buffer;
        }
        return buffer.slice(buffer.position(), bytes).order(ByteOrder.nativeOrder());
    }

    /**
     * A counts or displacements array of a V collective: one entry per rank, none negative, each fitting an int.
     *
     * @return the entries as ints, a copy the caller cannot change under the running operation.
     */
    static int[] perRank(final String name, final long[] values, final int worldSize)
    {
        notNull(values, name);
        if (values.length != worldSize)
        {
            throw new IllegalArgumentException(name + " must have " + worldSize + " entries, one per rank, got " +
                values.length);
        }
        final int[] ints = new int[worldSize];
        for (int i = 0; i < worldSize; i++)
        {
            if (values[i] < 0)
            {
                throw new IllegalArgumentException(name + "[" + i + "] must not be negative, got " + values[i]);
            }
            if (values[i] > Integer.MAX_VALUE)
            {
                throw new IllegalArgumentException(name + "[" + i + "] " + values[i] + " is over 2 GiB elements, " +
                    "more than a ByteBuffer holds");
            }
            ints[i] = (int)values[i];
        }
        return ints;
    }

    /**
     * A rank's own count, given twice (as a scalar and in the counts array), must agree.
     */
    static void ownCount(
        final String name, final long count, final String countsName, final int[] counts, final int rank)
    {
        if (count != counts[rank])
        {
            throw new IllegalArgumentException(name + " " + count + " must equal " + countsName + "[" + rank +
                "] (this rank's entry), which is " + counts[rank]);
        }
    }

    /**
     * Checks that every non-empty block of a V collective lies in the buffer, and sets the displacement of every empty
     * block to 0 (MPI lets it point anywhere; the algorithms never address it then).
     *
     * @return the bytes from the buffer's position to the end of the last block: the region the operation uses.
     */
    static int blocks(
        final String name,
        final ByteBuffer buffer,
        final String countsName,
        final int[] counts,
        final String displsName,
        final int[] displs,
        final DataType type)
    {
        notNull(buffer, name);
        long extent = 0;
        for (int b = 0; b < counts.length; b++)
        {
            if (counts[b] == 0)
            {
                displs[b] = 0;
                continue;
            }
            final long end = ((long)displs[b] + counts[b]) * type.size();
            if (end > buffer.remaining())
            {
                throw new IllegalArgumentException(name + " is too small for block " + b + " (" + displsName + "[" +
                    b + "] + " + countsName + "[" + b + "] = " + (displs[b] + (long)counts[b]) + " elements): needs " +
                    end + " bytes from its position, has " + buffer.remaining() + " remaining (position " +
                    buffer.position() + ", limit " + buffer.limit() + ")");
            }
            extent = Math.max(extent, end);
        }
        return (int)extent;
    }

    /**
     * Output blocks of a V collective must not overlap: two ranks' data would land in the same bytes.
     */
    static void disjoint(final String displsName, final int[] counts, final int[] displs)
    {
        final Integer[] order = new Integer[counts.length];
        for (int b = 0; b < order.length; b++)
        {
            order[b] = b;
        }
        Arrays.sort(order, Comparator.comparingInt(b -> displs[b]));
        int previous = -1;
        for (final int b : order)
        {
            if (counts[b] == 0)
            {
                continue;
            }
            if (previous >= 0 && displs[b] < (long)displs[previous] + counts[previous])
            {
                throw new IllegalArgumentException(displsName + " makes blocks overlap: block " + previous +
                    " is elements [" + displs[previous] + ", " + ((long)displs[previous] + counts[previous]) +
                    "), block " + b + " starts at " + displs[b]);
            }
            previous = b;
        }
    }

    /**
     * The elements of all blocks together, which must fit a ByteBuffer when packed.
     */
    static long total(final String countsName, final int[] counts, final DataType type)
    {
        long total = 0;
        for (final int count : counts)
        {
            total += count;
        }
        if (total * type.size() > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException(countsName + " add up to " + total + " x " + type + ", over 2 GiB, " +
                "the most a ByteBuffer holds");
        }
        return total;
    }

    static void rank(final String name, final int rank, final int worldSize)
    {
        if (rank < 0 || rank >= worldSize)
        {
            throw new IllegalArgumentException(name + " must be in [0, " + worldSize + "), got " + rank);
        }
    }

    /**
     * Whether two regions start at the same byte of the same memory.
     */
    static boolean sameStart(final ByteBuffer a, final ByteBuffer b)
    {
        if (a.isDirect() && b.isDirect())
        {
            return BufferUtil.address(a) == BufferUtil.address(b);
        }
        return !a.isDirect() && !b.isDirect() && BufferUtil.array(a) == BufferUtil.array(b) &&
            BufferUtil.arrayOffset(a) == BufferUtil.arrayOffset(b);
    }

    /**
     * Whether two regions share any byte.
     */
    static boolean overlap(final ByteBuffer a, final ByteBuffer b)
    {
        if (a.isDirect() != b.isDirect())
        {
            return false;
        }
        if (a.isDirect())
        {
            final long aStart = BufferUtil.address(a);
            final long bStart = BufferUtil.address(b);
            return aStart < bStart + b.capacity() && bStart < aStart + a.capacity();
        }
        // Through Agrona, which also sees the array behind a read-only view (hasArray() is false there).
        if (BufferUtil.array(a) != BufferUtil.array(b))
        {
            return false;
        }
        final int aStart = BufferUtil.arrayOffset(a);
        final int bStart = BufferUtil.arrayOffset(b);
        return aStart < bStart + b.capacity() && bStart < aStart + a.capacity();
    }

    /**
     * Whether region {@code inner} is exactly block {@code block} of {@code outer}.
     */
    static boolean isBlock(final ByteBuffer inner, final ByteBuffer outer, final int block, final int blockBytes)
    {
        if (inner.isDirect() && outer.isDirect())
        {
            return BufferUtil.address(inner) == BufferUtil.address(outer) + (long)block * blockBytes;
        }
        return !inner.isDirect() && !outer.isDirect() && BufferUtil.array(inner) == BufferUtil.array(outer) &&
            BufferUtil.arrayOffset(inner) == BufferUtil.arrayOffset(outer) + block * blockBytes;
    }
}
