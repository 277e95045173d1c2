package dev.hccl.algorithms.kernel;

import dev.hccl.api.Fp8Floats;
import dev.hccl.api.HalfFloats;

import dev.hccl.api.DataType;
import jdk.incubator.vector.VectorShape;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The {@link KernelFactory} of {@link KernelFamily#VECTOR}: Vector API kernels in the JVM's preferred vector shape,
 * for the types and operators where they beat the scalar kernels; the scalar kernel everywhere else.
 * <p>
 * Loaded only by {@link KernelSelection#vectorFactory(boolean)}, reflectively, once {@code jdk.incubator.vector} is
 * known to be in the boot layer: this class and the kernels it creates import that module.
 * <p>
 * Which kernels, from measurements on 64 MiB (memory-bound) and 4 MiB (cache-resident) direct buffers (figures in
 * docs/PERFORMANCE.md):
 * <ul>
 *   <li>INT8, UINT8 and INT16, all operators: several times faster than the scalar loops, which C2 does not
 *   vectorize (their Unsafe accesses are opaque to its auto-vectorizer).</li>
 *   <li>INT32 and FP32, all operators, where vectors have at least 256 bits: as fast as memory allows, and faster than
 *   scalar for max and min; with 128-bit vectors the per-vector overhead of JDK 17's buffer access makes them slower
 *   than scalar.</li>
 *   <li>INT64 and FP64: scalar. The unrolled scalar loop moves 8 bytes per element, and the Vector API's buffer
 *   access costs as much per vector as it saves: equal when memory-bound, slower when in cache.</li>
 *   <li>FP8 (E4M3, E5M2): scalar, a lookup of each pair of operands in a table of all 65,536 results.</li>
 *   <li>FP16 and BF16: scalar unless asked for ({@code -Dhccl.kernels.half=vector}). The vector kernels are correct
 *   and, in a JVM that has run little other Vector API code, several times faster; but each loop is a
 *   long chain of Vector API calls, and once other kernels have left their type profiles in the Vector API's shared
 *   code, C2 in JDK 17 may fail to turn some of those calls into SIMD instructions, and the kernel then runs slower
 *   than the scalar one.</li>
 * </ul>
 * Every kernel handed out has first been run once against the scalar kernel on a small buffer: the Vector API is an
 * incubator module and changes between JDKs (from JDK 19 on it loads and stores through {@code MemorySegment} instead
 * of {@code ByteBuffer}, which {@link VectorMemory} bridges), and a change it does not foresee shows up only when a
 * kernel first runs. A kernel that fails that test fails the whole family, and {@link Reducers} falls back to scalar,
 * saying why.
 */
final class VectorKernels implements KernelFactory
{
    /**
     * The narrowest preferred shape worth using at all: below 128 bits C2 has no SIMD registers to put the vectors in,
     * and the Vector API would run its lane-by-lane Java fallback, many times slower than the scalar kernels.
     */
    private static final int MIN_VECTOR_BITS = 128;

    /** The narrowest preferred shape at which the 32-bit kernels beat the scalar ones. */
    private static final int MIN_VECTOR_BITS_32 = 256;

    private final int vectorBits;
    private final boolean halfFloats;

    /**
     * Creates the factory.
     *
     * @param halfFloats whether to hand out vector kernels for FP16 and BF16 too.
     * @throws UnsupportedOperationException if the JVM offers no vectors of at least 128 bits, or if its Vector API
     *                                       has no memory access that {@link VectorMemory} knows.
     */
    VectorKernels(final boolean halfFloats)
    {
        if (VectorMemory.unavailable() != null)
        {
            throw new UnsupportedOperationException(VectorMemory.unavailable());
        }
        vectorBits = VectorShape.preferredShape().vectorBitSize();
        if (vectorBits < MIN_VECTOR_BITS)
        {
            throw new UnsupportedOperationException("preferred vector shape is only " + vectorBits + " bits");
        }
        // The 16-bit floating-point kernels pack two elements per int lane, the first in the low half.
        this.halfFloats = halfFloats && ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalStateException if the vector kernel does not give the scalar kernel's result.
     * @throws LinkageError          if the vector kernel cannot run on this JVM's Vector API.
     */
    @Override
    public AbstractReducer kernel(final AbstractReducer scalar)
    {
        final boolean wide = vectorBits >= MIN_VECTOR_BITS_32;
        final AbstractReducer vector = switch (scalar.type)
        {
            case INT8, UINT8 -> new Int8VectorReducer(scalar);
            case INT16 -> new Int16VectorReducer(scalar);
            case INT32 -> wide ? new Int32VectorReducer(scalar) : null;
            case FP32 -> wide ? new Fp32VectorReducer(scalar) : null;
            case FP16 -> halfFloats ? new Fp16VectorReducer(scalar) : null;
            case BF16 -> halfFloats ? new Bf16VectorReducer(scalar) : null;
            case INT64, FP64 -> null;
            // A table lookup per element (Fp8Reducer), which the Vector API has no faster form of.
            case FP8_E4M3, FP8_E5M2 -> null;
        };
        if (vector == null)
        {
            return scalar;
        }
        selfTest(scalar, vector);
        return vector;
    }

    /**
     * {@inheritDoc}
     */
    @Override
    public String description()
    {
        return "jdk.incubator.vector, " + vectorBits + "-bit vectors, " + VectorMemory.kind() + " access";
    }

    /**
     * Runs both kernels on the same small input, a few whole vectors and a tail, of ordinary values (no NaN, whose
     * payload Java does not pin down), and demands the same bits.
     */
    private void selfTest(final AbstractReducer scalar, final AbstractReducer vector)
    {
        final DataType type = scalar.type;
        final int count = 2 * vectorBits / 8 + 3;
        final ByteBuffer src = probe(type, count, 1);
        final ByteBuffer expected = probe(type, count, 2);
        final ByteBuffer actual = probe(type, count, 2);
        scalar.reduce(expected, 0, src, 0, count);
        vector.reduce(actual, 0, src, 0, count);
        if (!expected.equals(actual))
        {
            throw new IllegalStateException(vector + " differs from " + scalar + " in its self-test");
        }
    }

    /**
     * {@code count} small, mixed-sign, finite elements of {@code type} in native order, varied by {@code seed}.
     */
    private static ByteBuffer probe(final DataType type, final int count, final int seed)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(count * type.size()).order(ByteOrder.nativeOrder());
        for (int i = 0; i < count; i++)
        {
            final int value = ((i * 37 + seed * 11) % 29) - 14;
            final int at = i * type.size();
            switch (type)
            {
                case INT8, UINT8 -> buffer.put(at, (byte)(value * 9));
                case INT16 -> buffer.putShort(at, (short)(value * 2345));
                case INT32 -> buffer.putInt(at, value * 123_456_789);
                case INT64 -> buffer.putLong(at, value * 12_345_678_901_234L);
                case FP16 -> buffer.putShort(at, HalfFloats.floatToFp16(value * 0.375f));
                case BF16 -> buffer.putShort(at, HalfFloats.floatToBf16(value * 0.375f));
                case FP32 -> buffer.putFloat(at, value * 0.375f);
                case FP64 -> buffer.putDouble(at, value * 0.375);
                case FP8_E4M3 -> buffer.put(at, Fp8Floats.floatToE4m3(value * 0.375f));
                case FP8_E5M2 -> buffer.put(at, Fp8Floats.floatToE5m2(value * 0.375f));
            }
        }
        return buffer;
    }
}
