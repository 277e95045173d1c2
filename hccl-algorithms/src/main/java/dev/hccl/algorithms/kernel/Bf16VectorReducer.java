package dev.hccl.algorithms.kernel;

import dev.hccl.api.HalfFloats;

import dev.hccl.api.DataType;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorSpecies;

import static jdk.incubator.vector.VectorOperators.ADD;
import static jdk.incubator.vector.VectorOperators.AND_NOT;
import static jdk.incubator.vector.VectorOperators.ASHR;
import static jdk.incubator.vector.VectorOperators.LSHL;
import static jdk.incubator.vector.VectorOperators.LSHR;
import static jdk.incubator.vector.VectorOperators.MAX;
import static jdk.incubator.vector.VectorOperators.MIN;
import static jdk.incubator.vector.VectorOperators.MUL;

/**
 * Vector API kernels for {@link DataType#BF16}, bit-identical to {@link Bf16Reducer}: each element widens exactly to
 * {@code float}, the operator runs in {@code float} lanes (max and min as {@link Math#max(float, float)} and
 * {@link Math#min(float, float)}), and the result rounds back to nearest even as {@link HalfFloats#floatToBf16(float)}
 * does, NaN included.
 * <p>
 * The Vector API of JDK 17 has no 16-bit floating-point lanes, and changing lane size between {@code short} and
 * {@code float} would halve or double the vector shape. Instead each {@code int} lane carries a pair of elements
 * (little-endian: the first in the low half), and each half is widened and narrowed with shifts and masks, so every
 * vector keeps the preferred shape. The factory uses this class on little-endian platforms only, and only when asked
 * to ({@code -Dhccl.kernels.half=vector}; see {@link VectorKernels} for why).
 * <p>
 * The loops are written out in full, one per operator, rather than calling helpers for the conversions: every Vector
 * API call expands to many compiler nodes before it folds into an instruction, C2 stops inlining ordinary methods
 * into a method past a node budget (only the Vector API's own {@code @ForceInline} methods are exempt), and a vector
 * passed to a method that is not inlined is boxed on the heap, which is slower than the scalar kernel.
 */
final class Bf16VectorReducer extends AbstractVectorReducer
{
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    /** The same lanes as {@code float}. */
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    /** Elements per vector: each {@code int} lane holds two, so the {@code float} lanes match the {@code int} ones. */
    private static final int STEP = 2 * INTS.length();

    /**
     * @param scalar the {@link DataType#BF16} scalar kernel of the same operator.
     */
    Bf16VectorReducer(final AbstractReducer scalar)
    {
        super(scalar);
    }

    @Override
    int reduceVectors(final Object dst, final int d, final Object src, final int s, final int count)
    {
        return switch (op)
        {
            case SUM -> sum(dst, d, src, s, count);
            case PROD -> prod(dst, d, src, s, count);
            case MAX -> max(dst, d, src, s, count);
            case MIN -> min(dst, d, src, s, count);
            default -> throw unsupported(op);
        };
    }

    static int sum(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = count - count % STEP;
        for (int i = 0; i < bound; i += STEP)
        {
            final int o = i << 1;
            final IntVector a = VectorMemory.ints(INTS, dst, d + o);
            final IntVector b = VectorMemory.ints(INTS, src, s + o);
            // Widen: each bfloat16 is the upper half of its binary32.
            final FloatVector first = (FloatVector)a.lanewise(LSHL, 16).reinterpretShape(FLOATS, 0)
                .lanewise(ADD, b.lanewise(LSHL, 16).reinterpretShape(FLOATS, 0));
            final FloatVector second = (FloatVector)a.and(0xFFFF_0000).reinterpretShape(FLOATS, 0)
                .lanewise(ADD, b.and(0xFFFF_0000).reinterpretShape(FLOATS, 0));
            // Narrow (HalfFloats.floatToBf16) with integer arithmetic only: masks and blends are what C2 most often
            // fails to compile into SIMD code once other kernels have run. A NaN gets its quiet bit and is truncated;
            // anything else gets the round-to-nearest-even increment.
            final IntVector x = (IntVector)first.reinterpretShape(INTS, 0);
            final IntVector xNaN = IntVector.broadcast(INTS, HalfFloats.FLOAT_INFINITY)
                .sub(x.and(0x7FFF_FFFF)).lanewise(ASHR, 31);
            final IntVector xRounded = x.or(xNaN.and(0x0040_0000))
                .add(x.lanewise(LSHR, 16).and(1).add(0x7FFF).lanewise(AND_NOT, xNaN));
            final IntVector y = (IntVector)second.reinterpretShape(INTS, 0);
            final IntVector yNaN = IntVector.broadcast(INTS, HalfFloats.FLOAT_INFINITY)
                .sub(y.and(0x7FFF_FFFF)).lanewise(ASHR, 31);
            final IntVector yRounded = y.or(yNaN.and(0x0040_0000))
                .add(y.lanewise(LSHR, 16).and(1).add(0x7FFF).lanewise(AND_NOT, yNaN));
            VectorMemory.store(xRounded.lanewise(LSHR, 16).or(yRounded.and(0xFFFF_0000)), dst, d + o);
        }
        return bound;
    }

    static int prod(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = count - count % STEP;
        for (int i = 0; i < bound; i += STEP)
        {
            final int o = i << 1;
            final IntVector a = VectorMemory.ints(INTS, dst, d + o);
            final IntVector b = VectorMemory.ints(INTS, src, s + o);
            // Widen: each bfloat16 is the upper half of its binary32.
            final FloatVector first = (FloatVector)a.lanewise(LSHL, 16).reinterpretShape(FLOATS, 0)
                .lanewise(MUL, b.lanewise(LSHL, 16).reinterpretShape(FLOATS, 0));
            final FloatVector second = (FloatVector)a.and(0xFFFF_0000).reinterpretShape(FLOATS, 0)
                .lanewise(MUL, b.and(0xFFFF_0000).reinterpretShape(FLOATS, 0));
            // Narrow (HalfFloats.floatToBf16) with integer arithmetic only: masks and blends are what C2 most often
            // fails to compile into SIMD code once other kernels have run. A NaN gets its quiet bit and is truncated;
            // anything else gets the round-to-nearest-even increment.
            final IntVector x = (IntVector)first.reinterpretShape(INTS, 0);
            final IntVector xNaN = IntVector.broadcast(INTS, HalfFloats.FLOAT_INFINITY)
                .sub(x.and(0x7FFF_FFFF)).lanewise(ASHR, 31);
            final IntVector xRounded = x.or(xNaN.and(0x0040_0000))
                .add(x.lanewise(LSHR, 16).and(1).add(0x7FFF).lanewise(AND_NOT, xNaN));
            final IntVector y = (IntVector)second.reinterpretShape(INTS, 0);
            final IntVector yNaN = IntVector.broadcast(INTS, HalfFloats.FLOAT_INFINITY)
                .sub(y.and(0x7FFF_FFFF)).lanewise(ASHR, 31);
            final IntVector yRounded = y.or(yNaN.and(0x0040_0000))
                .add(y.lanewise(LSHR, 16).and(1).add(0x7FFF).lanewise(AND_NOT, yNaN));
            VectorMemory.store(xRounded.lanewise(LSHR, 16).or(yRounded.and(0xFFFF_0000)), dst, d + o);
        }
        return bound;
    }

    static int max(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = count - count % STEP;
        for (int i = 0; i < bound; i += STEP)
        {
            final int o = i << 1;
            final IntVector a = VectorMemory.ints(INTS, dst, d + o);
            final IntVector b = VectorMemory.ints(INTS, src, s + o);
            // Widen: each bfloat16 is the upper half of its binary32.
            final FloatVector first = (FloatVector)a.lanewise(LSHL, 16).reinterpretShape(FLOATS, 0)
                .lanewise(MAX, b.lanewise(LSHL, 16).reinterpretShape(FLOATS, 0));
            final FloatVector second = (FloatVector)a.and(0xFFFF_0000).reinterpretShape(FLOATS, 0)
                .lanewise(MAX, b.and(0xFFFF_0000).reinterpretShape(FLOATS, 0));
            // Narrow (HalfFloats.floatToBf16) with integer arithmetic only: masks and blends are what C2 most often
            // fails to compile into SIMD code once other kernels have run. A NaN gets its quiet bit and is truncated;
            // anything else gets the round-to-nearest-even increment.
            final IntVector x = (IntVector)first.reinterpretShape(INTS, 0);
            final IntVector xNaN = IntVector.broadcast(INTS, HalfFloats.FLOAT_INFINITY)
                .sub(x.and(0x7FFF_FFFF)).lanewise(ASHR, 31);
            final IntVector xRounded = x.or(xNaN.and(0x0040_0000))
                .add(x.lanewise(LSHR, 16).and(1).add(0x7FFF).lanewise(AND_NOT, xNaN));
            final IntVector y = (IntVector)second.reinterpretShape(INTS, 0);
            final IntVector yNaN = IntVector.broadcast(INTS, HalfFloats.FLOAT_INFINITY)
                .sub(y.and(0x7FFF_FFFF)).lanewise(ASHR, 31);
            final IntVector yRounded = y.or(yNaN.and(0x0040_0000))
                .add(y.lanewise(LSHR, 16).and(1).add(0x7FFF).lanewise(AND_NOT, yNaN));
            VectorMemory.store(xRounded.lanewise(LSHR, 16).or(yRounded.and(0xFFFF_0000)), dst, d + o);
        }
        return bound;
    }

    static int min(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = count - count % STEP;
        for (int i = 0; i < bound; i += STEP)
        {
            final int o = i << 1;
            final IntVector a = VectorMemory.ints(INTS, dst, d + o);
            final IntVector b = VectorMemory.ints(INTS, src, s + o);
            // Widen: each bfloat16 is the upper half of its binary32.
            final FloatVector first = (FloatVector)a.lanewise(LSHL, 16).reinterpretShape(FLOATS, 0)
                .lanewise(MIN, b.lanewise(LSHL, 16).reinterpretShape(FLOATS, 0));
            final FloatVector second = (FloatVector)a.and(0xFFFF_0000).reinterpretShape(FLOATS, 0)
                .lanewise(MIN, b.and(0xFFFF_0000).reinterpretShape(FLOATS, 0));
            // Narrow (HalfFloats.floatToBf16) with integer arithmetic only: masks and blends are what C2 most often
            // fails to compile into SIMD code once other kernels have run. A NaN gets its quiet bit and is truncated;
            // anything else gets the round-to-nearest-even increment.
            final IntVector x = (IntVector)first.reinterpretShape(INTS, 0);
            final IntVector xNaN = IntVector.broadcast(INTS, HalfFloats.FLOAT_INFINITY)
                .sub(x.and(0x7FFF_FFFF)).lanewise(ASHR, 31);
            final IntVector xRounded = x.or(xNaN.and(0x0040_0000))
                .add(x.lanewise(LSHR, 16).and(1).add(0x7FFF).lanewise(AND_NOT, xNaN));
            final IntVector y = (IntVector)second.reinterpretShape(INTS, 0);
            final IntVector yNaN = IntVector.broadcast(INTS, HalfFloats.FLOAT_INFINITY)
                .sub(y.and(0x7FFF_FFFF)).lanewise(ASHR, 31);
            final IntVector yRounded = y.or(yNaN.and(0x0040_0000))
                .add(y.lanewise(LSHR, 16).and(1).add(0x7FFF).lanewise(AND_NOT, yNaN));
            VectorMemory.store(xRounded.lanewise(LSHR, 16).or(yRounded.and(0xFFFF_0000)), dst, d + o);
        }
        return bound;
    }
}
