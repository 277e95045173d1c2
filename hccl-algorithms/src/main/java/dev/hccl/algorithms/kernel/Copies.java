package dev.hccl.algorithms.kernel;

import dev.hccl.api.spi.NativeCopy;
import org.agrona.UnsafeApi;
import org.slf4j.LoggerFactory;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Byte copies between buffers with {@code memmove} semantics.
 */
public final class Copies
{
    /**
     * Bytes per Unsafe copy. Copies that touch the Java heap cannot reach a safepoint until they finish, so large ones
     * are cut into chunks to keep GC pauses short, as the JDK's own bulk ByteBuffer operations do.
     */
    static final int CHUNK = 1 << 20;

    static
    {
        if (!NativeCopy.available())
        {
            LoggerFactory.getLogger(Copies.class).debug("copies between native memory stay the JVM's: {}",
                NativeCopy.unavailable());
        }
    }

    private Copies()
    {
    }

    /**
     * Copies {@code bytes} bytes from {@code src} to {@code dst}, as {@code memmove} does: the result is correct when
     * the two ranges overlap in the same memory (the same array or the same native memory, also through different
     * views such as slices, duplicates or read-only views), and nothing happens when they are the very same range.
     * <p>
     * Indices are absolute; neither buffer's position or limit changes. Works for direct, heap and read-only sources.
     *
     * @param dst      destination.
     * @param dstIndex absolute byte offset in {@code dst}.
     * @param src      source.
     * @param srcIndex absolute byte offset in {@code src}.
     * @param bytes    bytes to copy.
     * @throws IllegalArgumentException         if {@code bytes} is negative.
     * @throws IndexOutOfBoundsException        if either range is not within {@code [0, limit)} of its buffer.
     * @throws java.nio.ReadOnlyBufferException if {@code dst} is read-only.
     * @throws NullPointerException             if a buffer is null.
     */
    public static void copy(
        final ByteBuffer dst, final int dstIndex, final ByteBuffer src, final int srcIndex, final int bytes)
    {
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(src, "src");
        if (bytes < 0)
        {
            throw new IllegalArgumentException("bytes must be >= 0: " + bytes);
        }
        BufferAccess.checkWritable(dst);
        BufferAccess.checkRange(dst, dstIndex, bytes, "dst");
        BufferAccess.checkRange(src, srcIndex, bytes, "src");

        final Object dstBase = BufferAccess.base(dst);
        final long dstOffset = BufferAccess.offset(dst, dstIndex);
        final Object srcBase = BufferAccess.base(src);
        final long srcOffset = BufferAccess.offset(src, srcIndex);
        if (dstBase == srcBase && dstOffset == srcOffset)
        {
            return;
        }

        copy(dstBase, dstOffset, srcBase, srcOffset, bytes);

        // The copy holds only raw addresses; keep direct buffers' memory from being freed under it.
        Reference.reachabilityFence(dst);
        Reference.reachabilityFence(src);
    }

    /**
     * How copies between native memory are made in this JVM, for reports such as hccl-bench's header.
     *
     * @return {@code C library (memmove)}, or {@code JVM (why not the C library)}.
     */
    public static String description()
    {
        return NativeCopy.available() ? "C library (memmove)" : "JVM (" + NativeCopy.unavailable() + ")";
    }

    /**
     * Moves bytes between resolved {@code (base, offset)} locations, chunk by chunk, in the direction that never
     * overwrites source bytes not yet copied. Each chunk's Unsafe copy is itself overlap-safe.
     */
    static void copy(
        final Object dstBase, final long dstOffset, final Object srcBase, final long srcOffset, final int bytes)
    {
        if (null == dstBase && null == srcBase && bytes >= NativeCopy.MIN_BYTES && NativeCopy.ready())
        {
            // Between native memory, through the C library's memmove, chunk by chunk as below: it handles overlap.
            final boolean backward = dstOffset > srcOffset && dstOffset < srcOffset + bytes;
            for (long done = 0; done < bytes; done += NativeCopy.MAX_BYTES)
            {
                final long length = Math.min(NativeCopy.MAX_BYTES, bytes - done);
                final long start = backward ? bytes - done - length : done;
                NativeCopy.copy(dstOffset + start, srcOffset + start, length);
            }
            return;
        }
        // Only the same base can overlap: two arrays never do, and an array never overlaps native memory.
        final boolean backward = dstBase == srcBase && dstOffset > srcOffset && dstOffset < srcOffset + bytes;
        if (backward)
        {
            for (long end = bytes; end > 0; end -= CHUNK)
            {
                final long length = Math.min(CHUNK, end);
                final long start = end - length;
                UnsafeApi.copyMemory(srcBase, srcOffset + start, dstBase, dstOffset + start, length);
            }
        }
        else
        {
            // long: start + CHUNK must not overflow when bytes is close to Integer.MAX_VALUE.
            for (long start = 0; start < bytes; start += CHUNK)
            {
                final long length = Math.min(CHUNK, bytes - start);
                UnsafeApi.copyMemory(srcBase, srcOffset + start, dstBase, dstOffset + start, length);
            }
        }
    }
}
