package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.Reducer;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;

/**
 * Common front half of every kernel: argument checks and the resolution of both buffers to Unsafe
 * {@code (base, offset)} pairs, done once per call, followed by one call into the subclass's tight loop.
 * <p>
 * Subclasses hold one type family and pick the loop for their operator with a switch outside the loop, so the loop
 * body has no per-element branch on the operator, no virtual call and no allocation.
 */
abstract class AbstractReducer implements Reducer
{
    /** The data type this kernel reduces. */
    final DataType type;
    /** The operator; never {@link ReduceOp#AVG}, which is {@link ReduceOp#SUM} followed by a divide. */
    final ReduceOp op;
    private final int elementSize;

    AbstractReducer(final DataType type, final ReduceOp op)
    {
        this.type = type;
        this.op = op;
        this.elementSize = type.size();
    }

    /**
     * {@inheritDoc}
     * <p>
     * {@code dst} and {@code src} may be the same memory (in place, {@code dst[i] = dst[i] op dst[i]}); partially
     * overlapping ranges are processed in ascending order.
     *
     * @throws java.nio.ReadOnlyBufferException if {@code dst} is read-only.
     * @throws IndexOutOfBoundsException         if either range is not within {@code [0, limit)} of its buffer.
     * @throws IllegalArgumentException          if {@code count} is negative.
     */
    @Override
    public final void reduce(
        final ByteBuffer dst, final int dstIndex, final ByteBuffer src, final int srcIndex, final int count)
    {
        final long bytes = checkDestination(dst, dstIndex, count);
        BufferAccess.checkRange(src, srcIndex, bytes, "src");

        reduceChecked(dst, dstIndex, src, srcIndex, count);

        // A direct buffer's memory is freed by a Cleaner once the buffer is unreachable; the loop only holds raw
        // addresses, so keep both buffers reachable until it is done.
        Reference.reachabilityFence(dst);
        Reference.reachabilityFence(src);
    }

    /**
     * {@inheritDoc}
     * <p>
     * {@code left} is either {@code dst}'s range itself or apart from it; {@code right} is apart from it.
     *
     * @throws java.nio.ReadOnlyBufferException if {@code dst} is read-only.
     * @throws IndexOutOfBoundsException         if a range is not within {@code [0, limit)} of its buffer.
     * @throws IllegalArgumentException          if {@code count} is negative, or an operand overlaps the destination
     *                                           other than so.
     */
    @Override
    public final void reduce(final ByteBuffer dst, final int dstIndex, final ByteBuffer left, final int leftIndex,
        final ByteBuffer right, final int rightIndex, final int count)
    {
        final long bytes = checkDestination(dst, dstIndex, count);
        BufferAccess.checkRange(left, leftIndex, bytes, "left");
        BufferAccess.checkRange(right, rightIndex, bytes, "right");
        final Object dstBase = BufferAccess.base(dst);
        final long dstOffset = BufferAccess.offset(dst, dstIndex);
        final Object leftBase = BufferAccess.base(left);
        final long leftOffset = BufferAccess.offset(left, leftIndex);
        if ((overlap(dstBase, dstOffset, leftBase, leftOffset, bytes) && dstOffset != leftOffset)
            || overlap(dstBase, dstOffset, BufferAccess.base(right), BufferAccess.offset(right, rightIndex), bytes))
        {
            throw new IllegalArgumentException("an operand overlaps the destination: left must be the destination " +
                "or apart from it, right apart from it");
        }

        reduceChecked(dst, dstIndex, left, leftIndex, right, rightIndex, count);

        Reference.reachabilityFence(dst);
        Reference.reachabilityFence(left);
        Reference.reachabilityFence(right);
    }

    /** Checks the count and the destination's range, and returns the bytes of {@code count} elements. */
    private long checkDestination(final ByteBuffer dst, final int dstIndex, final int count)
    {
        if (count < 0)
        {
            throw new IllegalArgumentException("count must be >= 0: " + count);
        }
        BufferAccess.checkWritable(dst);
        final long bytes = (long)count * elementSize;
        BufferAccess.checkRange(dst, dstIndex, bytes, "dst");
        return bytes;
    }

    /** Whether two ranges of {@code bytes} overlap, each given as Unsafe's {@code (base, offset)}. */
    private static boolean overlap(final Object aBase, final long a, final Object bBase, final long b, final long bytes)
    {
        return aBase == bBase && bytes > 0 && a < b + bytes && b < a + bytes;
    }

    /**
     * The reduction over arguments that {@link #reduce(ByteBuffer, int, ByteBuffer, int, int)} has already checked.
     * <p>
     * Scalar kernels resolve both buffers to Unsafe {@code (base, offset)} pairs here and run their loop; vector
     * kernels override this to work on the buffers themselves, which is what the Vector API loads from.
     *
     * @param dst      the destination, writable.
     * @param dstIndex absolute byte offset of the first destination element, in range.
     * @param src      the source.
     * @param srcIndex absolute byte offset of the first source element, in range.
     * @param count    elements, not negative.
     */
    void reduceChecked(
        final ByteBuffer dst, final int dstIndex, final ByteBuffer src, final int srcIndex, final int count)
    {
        reduce(
            BufferAccess.base(dst), BufferAccess.offset(dst, dstIndex),
            BufferAccess.base(src), BufferAccess.offset(src, srcIndex),
            count);
    }

    /**
     * The tight loop: {@code dst[i] = dst[i] op src[i]} over already checked and resolved memory.
     *
     * @param dstBase   null for off-heap memory, else the destination array.
     * @param dstOffset address or array offset of the first destination element.
     * @param srcBase   null for off-heap memory, else the source array.
     * @param srcOffset address or array offset of the first source element.
     * @param count     elements.
     */
    abstract void reduce(Object dstBase, long dstOffset, Object srcBase, long srcOffset, int count);

    /**
     * The three-operand reduction over arguments that
     * {@link #reduce(ByteBuffer, int, ByteBuffer, int, ByteBuffer, int, int)} has already checked; here the left
     * operand's copy into the destination, unless it is the destination, then the two-operand reduction.
     *
     * @param dst        the destination, writable.
     * @param dstIndex   absolute byte offset of the first destination element, in range.
     * @param left       the left operand.
     * @param leftIndex  absolute byte offset of its first element, in range.
     * @param right      the right operand.
     * @param rightIndex absolute byte offset of its first element, in range.
     * @param count      elements, not negative.
     */
    void reduceChecked(final ByteBuffer dst, final int dstIndex, final ByteBuffer left, final int leftIndex,
        final ByteBuffer right, final int rightIndex, final int count)
    {
        reduce(
            BufferAccess.base(dst), BufferAccess.offset(dst, dstIndex),
            BufferAccess.base(left), BufferAccess.offset(left, leftIndex),
            BufferAccess.base(right), BufferAccess.offset(right, rightIndex),
            count);
    }

    /**
     * {@code dst[i] = left[i] op right[i]} over checked and resolved memory, as the left operand's copy into the
     * destination (none where it is the destination) followed by the two-operand loop: for the edges of vector loops
     * and for kernels without a loop of their own for three operands.
     *
     * @param dstBase     null for off-heap memory, else the destination array.
     * @param dstOffset   address or array offset of the first destination element.
     * @param leftBase    the left operand's base.
     * @param leftOffset  its first element's address or array offset.
     * @param rightBase   the right operand's base.
     * @param rightOffset its first element's address or array offset.
     * @param count       elements.
     */
    void reduce(final Object dstBase, final long dstOffset, final Object leftBase, final long leftOffset,
        final Object rightBase, final long rightOffset, final int count)
    {
        if (leftBase != dstBase || leftOffset != dstOffset)
        {
            Copies.copy(dstBase, dstOffset, leftBase, leftOffset, count * elementSize);
        }
        reduce(dstBase, dstOffset, rightBase, rightOffset, count);
    }

    /**
     * {@inheritDoc}
     */
    @Override
    public final int elementSize()
    {
        return elementSize;
    }

    /**
     * {@inheritDoc}
     */
    @Override
    public String toString()
    {
        return "Reducer{" + type + " " + op + "}";
    }

    /**
     * The error for an operator a subclass does not know; unreachable while {@link Reducers} builds the kernels.
     *
     * @param op the operator.
     * @return the exception to throw.
     */
    static IllegalStateException unsupported(final ReduceOp op)
    {
        return new IllegalStateException("no kernel for " + op);
    }
}
