package dev.hccl.algorithms.kernel;

import dev.hccl.api.HalfFloats;

import dev.hccl.api.DataType;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

import static jdk.incubator.vector.VectorOperators.GE;
import static jdk.incubator.vector.VectorOperators.GT;
import static jdk.incubator.vector.VectorOperators.I2S;
import static jdk.incubator.vector.VectorOperators.LSHL;
import static jdk.incubator.vector.VectorOperators.LSHR;
import static jdk.incubator.vector.VectorOperators.S2I;

/**
 * Vector API kernels for {@link DataType#FP16}, bit-identical to {@link Fp16Reducer}: each element widens exactly to
 * {@code float} as {@link HalfFloats#fp16ToFloat(short)} does, the operator runs in {@code float} lanes (max and min as
 * {@link Math#max(float, float)} and {@link Math#min(float, float)}), and the result rounds back to nearest even as
 * {@link HalfFloats#floatToFp16(float)} does, overflow, subnormals and NaN included.
 * <p>
 * The Vector API of JDK 17 has no 16-bit floating-point lanes, nor a gather from the scalar kernel's lookup table
 * with indices in a vector. So the elements are loaded as {@code short} lanes in half the preferred shape, widened to
 * {@code int} lanes of the preferred shape, and converted with integer and {@code float} arithmetic on all their cases
 * at once, the right case picked by masks; the result goes back the same way. The factory uses this class only when
 * asked to ({@code -Dhccl.kernels.half=vector}; see {@link VectorKernels} for why).
 * <p>
 * Why the loops are written out in full, four times over: every Vector API call expands to many compiler nodes before
 * it folds into one instruction, and C2 stops inlining ordinary methods into a method past a node budget (only the
 * Vector API's own {@code @ForceInline} methods are exempt). Helper methods for the conversions got refused, and a
 * vector that crosses a call that is not inlined is boxed on the heap, which made the kernel slower than the scalar
 * one. The conversions between {@code int} and {@code float} lanes name their species ({@code reinterpretShape})
 * rather than let {@code reinterpretAsInts} look it up, which C2 sometimes failed to fold.
 */
final class Fp16VectorReducer extends AbstractVectorReducer
{
    /** The lanes the arithmetic runs in: the preferred shape. */
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    /** The same lanes as {@code float}. */
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    /** The elements as loaded and stored: as many lanes as {@link #INTS}, in half the bits. */
    private static final VectorSpecies<Short> HALVES =
        VectorSpecies.of(short.class, VectorShape.forBitSize(INTS.vectorBitSize() / 2));
    /** Elements per loop iteration. */
    private static final int STEP = INTS.length();

    /** Bits of a binary16 exponent and fraction, moved to their binary32 places: {@code 0x7FFF << 13}. */
    private static final int SPECIAL_EXPONENT = 0x0F80_0000;
    /** 2^112: binary16 bits shifted into binary32 places read as a value 2^-112 times the binary16 one. */
    private static final float REBIAS_SCALE = 0x1p112f;

    /**
     * @param scalar the {@link DataType#FP16} scalar kernel of the same operator.
     */
    Fp16VectorReducer(final AbstractReducer scalar)
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
            // Sign-extending to int lanes puts each element's sign bit where binary32 has it.
            final IntVector a = (IntVector)VectorMemory.shorts(HALVES, dst, d + o)
                .convertShape(S2I, INTS, 0);
            final IntVector b = (IntVector)VectorMemory.shorts(HALVES, src, s + o)
                .convertShape(S2I, INTS, 0);

            // Widen (HalfFloats.decodeFp16): exponent and fraction moved to their binary32 places read as a value
            // 2^-112 times the binary16 one, normal or subnormal, so scaling by 2^112 is exact; infinity and NaN
            // get the all-ones exponent instead, and keep their payload.
            final IntVector am = a.and(0x7FFF).lanewise(LSHL, 13);
            final IntVector bm = b.and(0x7FFF).lanewise(LSHL, 13);
            final FloatVector af = (FloatVector)((IntVector)((FloatVector)am.reinterpretShape(FLOATS, 0))
                .mul(REBIAS_SCALE).reinterpretShape(INTS, 0))
                .blend(am.or(HalfFloats.FLOAT_INFINITY), am.compare(GE, SPECIAL_EXPONENT))
                .or(a.and(0x8000_0000))
                .reinterpretShape(FLOATS, 0);
            final FloatVector bf = (FloatVector)((IntVector)((FloatVector)bm.reinterpretShape(FLOATS, 0))
                .mul(REBIAS_SCALE).reinterpretShape(INTS, 0))
                .blend(bm.or(HalfFloats.FLOAT_INFINITY), bm.compare(GE, SPECIAL_EXPONENT))
                .or(b.and(0x8000_0000))
                .reinterpretShape(FLOATS, 0);

            final FloatVector r = af.add(bf);

            // Narrow (HalfFloats.floatToFp16), all cases at once. Normal: round the 13 dropped bits to nearest even,
            // carrying into the exponent where it must. Subnormal or zero: the float adder rounds to a multiple of
            // 2^-24, 0.5f's ulp, to nearest even. NaN: the quiet bit forced, so that a truncated payload cannot read
            // as infinity.
            final IntVector bits = (IntVector)r.reinterpretShape(INTS, 0);
            final IntVector magnitude = bits.and(0x7FFF_FFFF);
            final IntVector normal = magnitude.add(0x0FFF - HalfFloats.EXPONENT_REBIAS)
                .add(magnitude.lanewise(LSHR, 13).and(1))
                .lanewise(LSHR, 13);
            final IntVector tiny = ((IntVector)r.abs().add(0.5f).reinterpretShape(INTS, 0)).sub(HalfFloats.HALF_BITS);
            final IntVector quietNaN = magnitude.lanewise(LSHR, 13).or(0x7E00).and(0x7FFF);
            final IntVector half = tiny
                .blend(normal, magnitude.compare(GE, HalfFloats.FP16_MIN_NORMAL))
                .blend(0x7C00, magnitude.compare(GE, HalfFloats.FP16_OVERFLOW_THRESHOLD))
                .blend(quietNaN, magnitude.compare(GT, HalfFloats.FLOAT_INFINITY))
                .or(bits.lanewise(LSHR, 16).and(0x8000));
            // Keeps the low 16 bits, as a (short) cast does.
            VectorMemory.store((ShortVector)half.convertShape(I2S, HALVES, 0), dst, d + o);
        }
        return bound;
    }

    static int prod(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = count - count % STEP;
        for (int i = 0; i < bound; i += STEP)
        {
            final int o = i << 1;
            // Sign-extending to int lanes puts each element's sign bit where binary32 has it.
            final IntVector a = (IntVector)VectorMemory.shorts(HALVES, dst, d + o)
                .convertShape(S2I, INTS, 0);
            final IntVector b = (IntVector)VectorMemory.shorts(HALVES, src, s + o)
                .convertShape(S2I, INTS, 0);

            // Widen (HalfFloats.decodeFp16): exponent and fraction moved to their binary32 places read as a value
            // 2^-112 times the binary16 one, normal or subnormal, so scaling by 2^112 is exact; infinity and NaN
            // get the all-ones exponent instead, and keep their payload.
            final IntVector am = a.and(0x7FFF).lanewise(LSHL, 13);
            final IntVector bm = b.and(0x7FFF).lanewise(LSHL, 13);
            final FloatVector af = (FloatVector)((IntVector)((FloatVector)am.reinterpretShape(FLOATS, 0))
                .mul(REBIAS_SCALE).reinterpretShape(INTS, 0))
                .blend(am.or(HalfFloats.FLOAT_INFINITY), am.compare(GE, SPECIAL_EXPONENT))
                .or(a.and(0x8000_0000))
                .reinterpretShape(FLOATS, 0);
            final FloatVector bf = (FloatVector)((IntVector)((FloatVector)bm.reinterpretShape(FLOATS, 0))
                .mul(REBIAS_SCALE).reinterpretShape(INTS, 0))
                .blend(bm.or(HalfFloats.FLOAT_INFINITY), bm.compare(GE, SPECIAL_EXPONENT))
                .or(b.and(0x8000_0000))
                .reinterpretShape(FLOATS, 0);

            final FloatVector r = af.mul(bf);

            // Narrow (HalfFloats.floatToFp16), all cases at once. Normal: round the 13 dropped bits to nearest even,
            // carrying into the exponent where it must. Subnormal or zero: the float adder rounds to a multiple of
            // 2^-24, 0.5f's ulp, to nearest even. NaN: the quiet bit forced, so that a truncated payload cannot read
            // as infinity.
            final IntVector bits = (IntVector)r.reinterpretShape(INTS, 0);
            final IntVector magnitude = bits.and(0x7FFF_FFFF);
            final IntVector normal = magnitude.add(0x0FFF - HalfFloats.EXPONENT_REBIAS)
                .add(magnitude.lanewise(LSHR, 13).and(1))
                .lanewise(LSHR, 13);
            final IntVector tiny = ((IntVector)r.abs().add(0.5f).reinterpretShape(INTS, 0)).sub(HalfFloats.HALF_BITS);
            final IntVector quietNaN = magnitude.lanewise(LSHR, 13).or(0x7E00).and(0x7FFF);
            final IntVector half = tiny
                .blend(normal, magnitude.compare(GE, HalfFloats.FP16_MIN_NORMAL))
                .blend(0x7C00, magnitude.compare(GE, HalfFloats.FP16_OVERFLOW_THRESHOLD))
                .blend(quietNaN, magnitude.compare(GT, HalfFloats.FLOAT_INFINITY))
                .or(bits.lanewise(LSHR, 16).and(0x8000));
            // Keeps the low 16 bits, as a (short) cast does.
            VectorMemory.store((ShortVector)half.convertShape(I2S, HALVES, 0), dst, d + o);
        }
        return bound;
    }

    static int max(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = count - count % STEP;
        for (int i = 0; i < bound; i += STEP)
        {
            final int o = i << 1;
            // Sign-extending to int lanes puts each element's sign bit where binary32 has it.
            final IntVector a = (IntVector)VectorMemory.shorts(HALVES, dst, d + o)
                .convertShape(S2I, INTS, 0);
            final IntVector b = (IntVector)VectorMemory.shorts(HALVES, src, s + o)
                .convertShape(S2I, INTS, 0);

            // Widen (HalfFloats.decodeFp16): exponent and fraction moved to their binary32 places read as a value
            // 2^-112 times the binary16 one, normal or subnormal, so scaling by 2^112 is exact; infinity and NaN
            // get the all-ones exponent instead, and keep their payload.
            final IntVector am = a.and(0x7FFF).lanewise(LSHL, 13);
            final IntVector bm = b.and(0x7FFF).lanewise(LSHL, 13);
            final FloatVector af = (FloatVector)((IntVector)((FloatVector)am.reinterpretShape(FLOATS, 0))
                .mul(REBIAS_SCALE).reinterpretShape(INTS, 0))
                .blend(am.or(HalfFloats.FLOAT_INFINITY), am.compare(GE, SPECIAL_EXPONENT))
                .or(a.and(0x8000_0000))
                .reinterpretShape(FLOATS, 0);
            final FloatVector bf = (FloatVector)((IntVector)((FloatVector)bm.reinterpretShape(FLOATS, 0))
                .mul(REBIAS_SCALE).reinterpretShape(INTS, 0))
                .blend(bm.or(HalfFloats.FLOAT_INFINITY), bm.compare(GE, SPECIAL_EXPONENT))
                .or(b.and(0x8000_0000))
                .reinterpretShape(FLOATS, 0);

            final FloatVector r = af.max(bf);

            // Narrow (HalfFloats.floatToFp16), all cases at once. Normal: round the 13 dropped bits to nearest even,
            // carrying into the exponent where it must. Subnormal or zero: the float adder rounds to a multiple of
            // 2^-24, 0.5f's ulp, to nearest even. NaN: the quiet bit forced, so that a truncated payload cannot read
            // as infinity.
            final IntVector bits = (IntVector)r.reinterpretShape(INTS, 0);
            final IntVector magnitude = bits.and(0x7FFF_FFFF);
            final IntVector normal = magnitude.add(0x0FFF - HalfFloats.EXPONENT_REBIAS)
                .add(magnitude.lanewise(LSHR, 13).and(1))
                .lanewise(LSHR, 13);
            final IntVector tiny = ((IntVector)r.abs().add(0.5f).reinterpretShape(INTS, 0)).sub(HalfFloats.HALF_BITS);
            final IntVector quietNaN = magnitude.lanewise(LSHR, 13).or(0x7E00).and(0x7FFF);
            final IntVector half = tiny
                .blend(normal, magnitude.compare(GE, HalfFloats.FP16_MIN_NORMAL))
                .blend(0x7C00, magnitude.compare(GE, HalfFloats.FP16_OVERFLOW_THRESHOLD))
                .blend(quietNaN, magnitude.compare(GT, HalfFloats.FLOAT_INFINITY))
                .or(bits.lanewise(LSHR, 16).and(0x8000));
            // Keeps the low 16 bits, as a (short) cast does.
            VectorMemory.store((ShortVector)half.convertShape(I2S, HALVES, 0), dst, d + o);
        }
        return bound;
    }

    static int min(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = count - count % STEP;
        for (int i = 0; i < bound; i += STEP)
        {
            final int o = i << 1;
            // Sign-extending to int lanes puts each element's sign bit where binary32 has it.
            final IntVector a = (IntVector)VectorMemory.shorts(HALVES, dst, d + o)
                .convertShape(S2I, INTS, 0);
            final IntVector b = (IntVector)VectorMemory.shorts(HALVES, src, s + o)
                .convertShape(S2I, INTS, 0);

            // Widen (HalfFloats.decodeFp16): exponent and fraction moved to their binary32 places read as a value
            // 2^-112 times the binary16 one, normal or subnormal, so scaling by 2^112 is exact; infinity and NaN
            // get the all-ones exponent instead, and keep their payload.
            final IntVector am = a.and(0x7FFF).lanewise(LSHL, 13);
            final IntVector bm = b.and(0x7FFF).lanewise(LSHL, 13);
            final FloatVector af = (FloatVector)((IntVector)((FloatVector)am.reinterpretShape(FLOATS, 0))
                .mul(REBIAS_SCALE).reinterpretShape(INTS, 0))
                .blend(am.or(HalfFloats.FLOAT_INFINITY), am.compare(GE, SPECIAL_EXPONENT))
                .or(a.and(0x8000_0000))
                .reinterpretShape(FLOATS, 0);
            final FloatVector bf = (FloatVector)((IntVector)((FloatVector)bm.reinterpretShape(FLOATS, 0))
                .mul(REBIAS_SCALE).reinterpretShape(INTS, 0))
                .blend(bm.or(HalfFloats.FLOAT_INFINITY), bm.compare(GE, SPECIAL_EXPONENT))
                .or(b.and(0x8000_0000))
                .reinterpretShape(FLOATS, 0);

            final FloatVector r = af.min(bf);

            // Narrow (HalfFloats.floatToFp16), all cases at once. Normal: round the 13 dropped bits to nearest even,
            // carrying into the exponent where it must. Subnormal or zero: the float adder rounds to a multiple of
            // 2^-24, 0.5f's ulp, to nearest even. NaN: the quiet bit forced, so that a truncated payload cannot read
            // as infinity.
            final IntVector bits = (IntVector)r.reinterpretShape(INTS, 0);
            final IntVector magnitude = bits.and(0x7FFF_FFFF);
            final IntVector normal = magnitude.add(0x0FFF - HalfFloats.EXPONENT_REBIAS)
                .add(magnitude.lanewise(LSHR, 13).and(1))
                .lanewise(LSHR, 13);
            final IntVector tiny = ((IntVector)r.abs().add(0.5f).reinterpretShape(INTS, 0)).sub(HalfFloats.HALF_BITS);
            final IntVector quietNaN = magnitude.lanewise(LSHR, 13).or(0x7E00).and(0x7FFF);
            final IntVector half = tiny
                .blend(normal, magnitude.compare(GE, HalfFloats.FP16_MIN_NORMAL))
                .blend(0x7C00, magnitude.compare(GE, HalfFloats.FP16_OVERFLOW_THRESHOLD))
                .blend(quietNaN, magnitude.compare(GT, HalfFloats.FLOAT_INFINITY))
                .or(bits.lanewise(LSHR, 16).and(0x8000));
            // Keeps the low 16 bits, as a (short) cast does.
            VectorMemory.store((ShortVector)half.convertShape(I2S, HALVES, 0), dst, d + o);
        }
        return bound;
    }
}
