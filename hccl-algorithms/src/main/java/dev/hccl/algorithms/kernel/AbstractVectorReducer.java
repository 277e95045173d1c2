package dev.hccl.algorithms.kernel;

import java.nio.ByteBuffer;

/**
 * Common part of the Vector API kernels: whole vectors are loaded from and stored to the buffers' memory through
 * {@link VectorMemory} (the Vector API has no access by raw address), and whatever does not fill a whole vector, the
 * tail, goes through the scalar kernel of the same type and operator.
 * <p>
 * Subclasses import {@code jdk.incubator.vector}; this class does not, but it exists only for them. Like the scalar
 * kernels, each subclass picks the loop for its operator with a switch outside the loop.
 */
abstract class AbstractVectorReducer extends AbstractReducer
{
    /** Destination alignment, in bytes, that the vector loops start at: a cache line, the widest x86 vector. */
    private static final int ALIGNMENT = 64;

    private final AbstractReducer scalar;
    /** Whether large calls take the vector loop whole yet. */
    private final VectorLoopTrial trial;

    /**
     * @param scalar the scalar kernel of the same type and operator, for tails and overlapping ranges.
     */
    AbstractVectorReducer(final AbstractReducer scalar)
    {
        super(scalar.type, scalar.op);
        this.scalar = scalar;
        this.trial = new VectorLoopTrial(type + " " + op);
    }

    @Override
    final void reduceChecked(
        final ByteBuffer dst, final int dstIndex, final ByteBuffer src, final int srcIndex, final int count)
    {
        final Object dstBase = BufferAccess.base(dst);
        final long dstOffset = BufferAccess.offset(dst, dstIndex);
        final Object srcBase = BufferAccess.base(src);
        final long srcOffset = BufferAccess.offset(src, srcIndex);
        final long bytes = (long)count * elementSize();

        if (dstBase == srcBase && dstOffset > srcOffset && dstOffset < srcOffset + bytes)
        {
            // The destination starts inside the source: in ascending order, results written early are read back as
            // later source operands. Only the element-by-element loop reproduces that exactly. (A destination at or
            // before the source is safe: a vector reads its source elements before anything overwrites them.)
            scalar.reduce(dstBase, dstOffset, srcBase, srcOffset, count);
            return;
        }
        reduceAligned(dst, dstIndex, dst, dstIndex, src, srcIndex, count);
    }

    /**
     * {@inheritDoc}
     * <p>
     * One pass: each vector of the result is stored once, from the two operands' loads.
     */
    @Override
    final void reduceChecked(final ByteBuffer dst, final int dstIndex, final ByteBuffer left, final int leftIndex,
        final ByteBuffer right, final int rightIndex, final int count)
    {
        reduceAligned(dst, dstIndex, left, leftIndex, right, rightIndex, count);
    }

    /**
     * {@code dst = left op right} ({@code left} may be {@code dst}): scalar steps up to the first destination element
     * on a cache line boundary, whole vectors, then the scalar kernel for the tail; while the loop is on trial
     * ({@link VectorLoopTrial}), a large call's vectors stop after the bytes the trial gives and the scalar kernel
     * does the rest.
     */
    private void reduceAligned(final ByteBuffer dst, final int dstIndex, final ByteBuffer left, final int leftIndex,
        final ByteBuffer right, final int rightIndex, final int count)
    {
        final Object dstBase = BufferAccess.base(dst);
        final long dstOffset = BufferAccess.offset(dst, dstIndex);
        final Object leftBase = BufferAccess.base(left);
        final long leftOffset = BufferAccess.offset(left, leftIndex);
        final Object rightBase = BufferAccess.base(right);
        final long rightOffset = BufferAccess.offset(right, rightIndex);

        // Vector stores that straddle two lines cost more, and buffers from allocateDirect, for one, start 16 bytes
        // into a line. Sources usually share the destination's alignment.
        final int size = elementSize();
        final int misalignment = (int)(dstOffset & (ALIGNMENT - 1));
        final int head = misalignment % size != 0 ? 0 :
            Math.min(count, ((ALIGNMENT - misalignment) & (ALIGNMENT - 1)) / size);
        if (head > 0)
        {
            scalar.reduce(dstBase, dstOffset, leftBase, leftOffset, rightBase, rightOffset, head);
        }

        final int headBytes = head * size;
        final Object dstMemory = VectorMemory.of(dst);
        final Object leftMemory = left == dst ? dstMemory : VectorMemory.of(left);
        // While the loop is on trial, a large call runs a little of its work through the vector loop, the rest through
        // the scalar kernel.
        final int whole = count - head;
        final boolean split = (long)whole * size >= VectorLoopTrial.MIN_BYTES && !trial.proven();
        final int vectorBytes = split ? trial.vectorBytes() : 0;
        final boolean timed = vectorBytes == VectorLoopTrial.TRIAL_BYTES;
        final long start = timed ? System.nanoTime() : 0;
        final int done = head + reduceVectors(dstMemory, dstIndex + headBytes, leftMemory, leftIndex + headBytes,
            VectorMemory.of(right), rightIndex + headBytes, split ? vectorBytes / size : whole);
        if (done < count)
        {
            final long vectorEnd = timed ? System.nanoTime() : 0;
            final long skipped = (long)done * size;
            scalar.reduce(dstBase, dstOffset + skipped, leftBase, leftOffset + skipped, rightBase,
                rightOffset + skipped, count - done);
            if (timed)
            {
                trial.record(vectorEnd - start, skipped - headBytes, System.nanoTime() - vectorEnd,
                    (long)(count - done) * size);
            }
        }
    }

    /**
     * Whether this kernel's large calls take its vector loop whole yet ({@link VectorLoopTrial}).
     *
     * @return the trial.
     */
    VectorLoopTrial trial()
    {
        return trial;
    }

    /**
     * {@inheritDoc}
     * <p>
     * Resolved addresses cannot feed a vector load, so this is the scalar kernel.
     */
    @Override
    final void reduce(final Object dstBase, final long dstOffset, final Object srcBase, final long srcOffset,
        final int count)
    {
        scalar.reduce(dstBase, dstOffset, srcBase, srcOffset, count);
    }

    /**
     * {@inheritDoc}
     * <p>
     * Likewise the scalar kernel.
     */
    @Override
    final void reduce(final Object dstBase, final long dstOffset, final Object leftBase, final long leftOffset,
        final Object rightBase, final long rightOffset, final int count)
    {
        scalar.reduce(dstBase, dstOffset, leftBase, leftOffset, rightBase, rightOffset, count);
    }

    /**
     * The vector loop: {@code dst[i] = left[i] op right[i]} for as many whole vectors as {@code count} elements fill;
     * {@code left} may be {@code dst} (the two-operand reduction). A vector's loads come before its store, so an
     * operand that is the destination's very range reads each element before it is overwritten.
     *
     * @param dst        the destination's memory ({@link VectorMemory#of(ByteBuffer)}), writable and range-checked.
     * @param dstIndex   absolute byte offset of the first destination element.
     * @param left       the left operand's memory, range-checked.
     * @param leftIndex  absolute byte offset of its first element.
     * @param right      the right operand's memory, range-checked.
     * @param rightIndex absolute byte offset of its first element.
     * @param count      elements in all.
     * @return the elements done, from the first; the caller does the rest with the scalar kernel.
     */
    abstract int reduceVectors(Object dst, int dstIndex, Object left, int leftIndex, Object right, int rightIndex,
        int count);

    /**
     * {@inheritDoc}
     */
    @Override
    public String toString()
    {
        return "VectorReducer{" + type + " " + op + "}";
    }
}
