package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vector API kernels for {@link DataType#FP32}: each lane does the same IEEE 754 operation as {@link Fp32Reducer} does
 * per element, so results are bit-identical to it.
 * <p>
 * Lanewise max and min are specified as {@link Math#max(float, float)} and {@link Math#min(float, float)}, which the
 * scalar kernel calls: a NaN operand gives NaN, and {@code +0.0} is greater than {@code -0.0}.
 */
final class Fp32VectorReducer extends AbstractVectorReducer
{
    private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;

    /**
     * @param scalar the {@link DataType#FP32} scalar kernel of the same operator.
     */
    Fp32VectorReducer(final AbstractReducer scalar)
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
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 2;
            final FloatVector a = VectorMemory.floats(SPECIES, dst, d + o);
            final FloatVector b = VectorMemory.floats(SPECIES, src, s + o);
            VectorMemory.store(a.add(b), dst, d + o);
        }
        return bound;
    }

    static int prod(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 2;
            final FloatVector a = VectorMemory.floats(SPECIES, dst, d + o);
            final FloatVector b = VectorMemory.floats(SPECIES, src, s + o);
            VectorMemory.store(a.mul(b), dst, d + o);
        }
        return bound;
    }

    static int max(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 2;
            final FloatVector a = VectorMemory.floats(SPECIES, dst, d + o);
            final FloatVector b = VectorMemory.floats(SPECIES, src, s + o);
            VectorMemory.store(a.max(b), dst, d + o);
        }
        return bound;
    }

    static int min(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 2;
            final FloatVector a = VectorMemory.floats(SPECIES, dst, d + o);
            final FloatVector b = VectorMemory.floats(SPECIES, src, s + o);
            VectorMemory.store(a.min(b), dst, d + o);
        }
        return bound;
    }
}
