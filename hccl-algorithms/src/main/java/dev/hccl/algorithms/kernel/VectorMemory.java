package dev.hccl.algorithms.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorSpecies;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Whole-vector loads and stores for the vector kernels, through whichever memory access this JVM's Vector API has:
 * <ul>
 *   <li>JDK 17 and 18: {@code ByteBuffer}s ({@code fromByteBuffer}, {@code intoByteBuffer}), called directly.</li>
 *   <li>JDK 19 on: {@code MemorySegment}s only ({@code fromMemorySegment}, {@code intoMemorySegment}, over
 *   {@code MemorySegment.ofBuffer}). The project compiles with {@code --release 17}, which has no
 *   {@code MemorySegment}, so these are looked up once as constant {@link MethodHandle}s, typed with {@code Object}
 *   for the segment; C2 inlines a {@code static final} handle's {@code invokeExact} as it would a direct call, so the
 *   Vector API's load and store intrinsics still apply. (A multi-release jar would need a JDK 22 to build; see
 *   docs/PERFORMANCE.md for why it was not worth that.)</li>
 * </ul>
 * Which one is fixed when this class loads, a constant, so the other branch folds away in compiled code, and the
 * ByteBuffer methods, absent from newer Vector APIs, are never linked there.
 * <p>
 * Contract: a kernel turns each buffer into its memory once per call with {@link #of(ByteBuffer)}, then loads and
 * stores at absolute byte offsets of the buffer, which the caller has range-checked (the Vector API checks them
 * again). Elements are in native byte order, as the scalar kernels read them through Unsafe.
 * <p>
 * One load and one store per vector class, alike but for their types, on purpose: each handle then has one exact
 * receiver type, which C2 inlines; a single handle for {@code Vector.intoMemorySegment} would see four classes, stay a
 * virtual call, and box every vector. For the same reason the methods the kernels call stay under 35 bytes of
 * bytecode ({@code -XX:MaxInlineSize}), so that they are inlined at every call site, hot or not; the segment calls,
 * with their exception handling, sit in methods of their own.
 */
final class VectorMemory
{
    /** Native order, a constant, so that the byte-swapping branch in every load and store folds away. */
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    /** Whether this JVM's Vector API works on memory segments rather than buffers. */
    private static final boolean SEGMENTS;

    /** Why neither access works on this JVM, or null. */
    private static final String UNAVAILABLE;

    // (Buffer)Object: MemorySegment.ofBuffer. Loads: (VectorSpecies, Object, long, ByteOrder)XVector.
    // Stores: (XVector, Object, long, ByteOrder)void. All null on the buffer path.
    private static final MethodHandle OF_BUFFER;
    private static final MethodHandle LOAD_BYTES;
    private static final MethodHandle LOAD_SHORTS;
    private static final MethodHandle LOAD_INTS;
    private static final MethodHandle LOAD_FLOATS;
    private static final MethodHandle STORE_BYTES;
    private static final MethodHandle STORE_SHORTS;
    private static final MethodHandle STORE_INTS;
    private static final MethodHandle STORE_FLOATS;

    static
    {
        final MethodHandle[] handles = new MethodHandle[9];
        String unavailable = null;
        boolean segments = false;
        if (!hasBufferAccess())
        {
            try
            {
                segments = true;
                final Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
                final MethodHandles.Lookup lookup = MethodHandles.publicLookup();
                handles[0] = lookup.findStatic(segment, "ofBuffer", MethodType.methodType(segment, Buffer.class))
                    .asType(MethodType.methodType(Object.class, Buffer.class));
                final Class<?>[] vectors = { ByteVector.class, ShortVector.class, IntVector.class, FloatVector.class };
                for (int i = 0; i < vectors.length; i++)
                {
                    handles[1 + i] = load(lookup, vectors[i], segment);
                    handles[5 + i] = store(lookup, vectors[i], segment);
                }
            }
            catch (final ReflectiveOperationException | RuntimeException ex)
            {
                unavailable = "the Vector API has neither ByteBuffer nor MemorySegment access (" + ex + ")";
            }
        }
        SEGMENTS = segments;
        UNAVAILABLE = unavailable;
        OF_BUFFER = handles[0];
        LOAD_BYTES = handles[1];
        LOAD_SHORTS = handles[2];
        LOAD_INTS = handles[3];
        LOAD_FLOATS = handles[4];
        STORE_BYTES = handles[5];
        STORE_SHORTS = handles[6];
        STORE_INTS = handles[7];
        STORE_FLOATS = handles[8];
    }

    private VectorMemory()
    {
    }

    /**
     * Why the vector kernels cannot load or store on this JVM.
     *
     * @return the reason, or null when they can.
     */
    static String unavailable()
    {
        return UNAVAILABLE;
    }

    /**
     * The access this JVM uses, for the log.
     *
     * @return {@code "ByteBuffer"} or {@code "MemorySegment"}.
     */
    static String kind()
    {
        return SEGMENTS ? "MemorySegment" : "ByteBuffer";
    }

    /**
     * The memory that the loads and stores take for a buffer: the buffer itself, or a segment over its bytes from
     * index 0 to its limit, so that offsets are the buffer's absolute indices.
     *
     * @param buffer the buffer, of any kind; read-only ones give memory that only loads work on.
     * @return the memory.
     */
    static Object of(final ByteBuffer buffer)
    {
        if (!SEGMENTS)
        {
            return buffer;
        }
        // A segment over a buffer starts at its position.
        final ByteBuffer whole = buffer.position() == 0 ? buffer : buffer.duplicate().position(0);
        try
        {
            return OF_BUFFER.invokeExact((Buffer)whole);
        }
        catch (final Throwable ex)
        {
            throw unchecked(ex);
        }
    }

    static ByteVector bytes(final VectorSpecies<Byte> species, final Object memory, final int offset)
    {
        return SEGMENTS ? bytesFromSegment(species, memory, offset) :
            ByteVector.fromByteBuffer(species, (ByteBuffer)memory, offset, NATIVE);
    }

    static ShortVector shorts(final VectorSpecies<Short> species, final Object memory, final int offset)
    {
        return SEGMENTS ? shortsFromSegment(species, memory, offset) :
            ShortVector.fromByteBuffer(species, (ByteBuffer)memory, offset, NATIVE);
    }

    static IntVector ints(final VectorSpecies<Integer> species, final Object memory, final int offset)
    {
        return SEGMENTS ? intsFromSegment(species, memory, offset) :
            IntVector.fromByteBuffer(species, (ByteBuffer)memory, offset, NATIVE);
    }

    static FloatVector floats(final VectorSpecies<Float> species, final Object memory, final int offset)
    {
        return SEGMENTS ? floatsFromSegment(species, memory, offset) :
            FloatVector.fromByteBuffer(species, (ByteBuffer)memory, offset, NATIVE);
    }

    static void store(final ByteVector vector, final Object memory, final int offset)
    {
        if (SEGMENTS)
        {
            storeToSegment(vector, memory, offset);
        }
        else
        {
            vector.intoByteBuffer((ByteBuffer)memory, offset, NATIVE);
        }
    }

    static void store(final ShortVector vector, final Object memory, final int offset)
    {
        if (SEGMENTS)
        {
            storeToSegment(vector, memory, offset);
        }
        else
        {
            vector.intoByteBuffer((ByteBuffer)memory, offset, NATIVE);
        }
    }

    static void store(final IntVector vector, final Object memory, final int offset)
    {
        if (SEGMENTS)
        {
            storeToSegment(vector, memory, offset);
        }
        else
        {
            vector.intoByteBuffer((ByteBuffer)memory, offset, NATIVE);
        }
    }

    static void store(final FloatVector vector, final Object memory, final int offset)
    {
        if (SEGMENTS)
        {
            storeToSegment(vector, memory, offset);
        }
        else
        {
            vector.intoByteBuffer((ByteBuffer)memory, offset, NATIVE);
        }
    }

    private static ByteVector bytesFromSegment(final VectorSpecies<Byte> species, final Object memory, final int offset)
    {
        try
        {
            return (ByteVector)LOAD_BYTES.invokeExact(species, memory, (long)offset, NATIVE);
        }
        catch (final Throwable ex)
        {
            throw unchecked(ex);
        }
    }

    private static ShortVector shortsFromSegment(final VectorSpecies<Short> species, final Object memory, final int offset)
    {
        try
        {
            return (ShortVector)LOAD_SHORTS.invokeExact(species, memory, (long)offset, NATIVE);
        }
        catch (final Throwable ex)
        {
            throw unchecked(ex);
        }
    }

    private static IntVector intsFromSegment(final VectorSpecies<Integer> species, final Object memory, final int offset)
    {
        try
        {
            return (IntVector)LOAD_INTS.invokeExact(species, memory, (long)offset, NATIVE);
        }
        catch (final Throwable ex)
        {
            throw unchecked(ex);
        }
    }

    private static FloatVector floatsFromSegment(final VectorSpecies<Float> species, final Object memory, final int offset)
    {
        try
        {
            return (FloatVector)LOAD_FLOATS.invokeExact(species, memory, (long)offset, NATIVE);
        }
        catch (final Throwable ex)
        {
            throw unchecked(ex);
        }
    }

    private static void storeToSegment(final ByteVector vector, final Object memory, final int offset)
    {
        try
        {
            STORE_BYTES.invokeExact(vector, memory, (long)offset, NATIVE);
        }
        catch (final Throwable ex)
        {
            throw unchecked(ex);
        }
    }

    private static void storeToSegment(final ShortVector vector, final Object memory, final int offset)
    {
        try
        {
            STORE_SHORTS.invokeExact(vector, memory, (long)offset, NATIVE);
        }
        catch (final Throwable ex)
        {
            throw unchecked(ex);
        }
    }

    private static void storeToSegment(final IntVector vector, final Object memory, final int offset)
    {
        try
        {
            STORE_INTS.invokeExact(vector, memory, (long)offset, NATIVE);
        }
        catch (final Throwable ex)
        {
            throw unchecked(ex);
        }
    }

    private static void storeToSegment(final FloatVector vector, final Object memory, final int offset)
    {
        try
        {
            STORE_FLOATS.invokeExact(vector, memory, (long)offset, NATIVE);
        }
        catch (final Throwable ex)
        {
            throw unchecked(ex);
        }
    }

    /** Whether {@code ByteVector.fromByteBuffer} exists: the Vector API of JDK 17 and 18. */
    private static boolean hasBufferAccess()
    {
        try
        {
            ByteVector.class.getMethod(
                "fromByteBuffer", VectorSpecies.class, ByteBuffer.class, int.class, ByteOrder.class);
            return true;
        }
        catch (final NoSuchMethodException ex)
        {
            return false;
        }
    }

    /** {@code XVector.fromMemorySegment(species, segment, offset, order)}, with {@code Object} for the segment. */
    private static MethodHandle load(final MethodHandles.Lookup lookup, final Class<?> vector, final Class<?> segment)
        throws ReflectiveOperationException
    {
        return lookup.findStatic(vector, "fromMemorySegment",
                MethodType.methodType(vector, VectorSpecies.class, segment, long.class, ByteOrder.class))
            .asType(MethodType.methodType(vector, VectorSpecies.class, Object.class, long.class, ByteOrder.class));
    }

    /** {@code vector.intoMemorySegment(segment, offset, order)}, with {@code Object} for the segment. */
    private static MethodHandle store(final MethodHandles.Lookup lookup, final Class<?> vector, final Class<?> segment)
        throws ReflectiveOperationException
    {
        return lookup.findVirtual(vector, "intoMemorySegment",
                MethodType.methodType(void.class, segment, long.class, ByteOrder.class))
            .asType(MethodType.methodType(void.class, vector, Object.class, long.class, ByteOrder.class));
    }

    /** The Vector API's own exceptions (bounds, read-only memory) are unchecked; anything else is a bug. */
    private static RuntimeException unchecked(final Throwable ex)
    {
        if (ex instanceof RuntimeException runtime)
        {
            throw runtime;
        }
        if (ex instanceof Error error)
        {
            throw error;
        }
        throw new IllegalStateException(ex);
    }
}
