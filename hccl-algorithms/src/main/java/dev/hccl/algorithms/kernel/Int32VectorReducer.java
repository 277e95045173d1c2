package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vector API kernels for {@link DataType#INT32}: lanewise {@code int} arithmetic wraps around on overflow, as
 * {@link Int32Reducer} and two's complement C do.
 */
final class Int32VectorReducer extends AbstractVectorReducer
{
    private static final VectorSpecies<Integer> SPECIES = IntVector.SPECIES_PREFERRED;

    /**
     * @param scalar the {@link DataType#INT32} scalar kernel of the same operator.
     */
    Int32VectorReducer(final AbstractReducer scalar)
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
            final IntVector a = VectorMemory.ints(SPECIES, dst, d + o);
            final IntVector b = VectorMemory.ints(SPECIES, src, s + o);
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
            final IntVector a = VectorMemory.ints(SPECIES, dst, d + o);
            final IntVector b = VectorMemory.ints(SPECIES, src, s + o);
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
            final IntVector a = VectorMemory.ints(SPECIES, dst, d + o);
            final IntVector b = VectorMemory.ints(SPECIES, src, s + o);
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
            final IntVector a = VectorMemory.ints(SPECIES, dst, d + o);
            final IntVector b = VectorMemory.ints(SPECIES, src, s + o);
            VectorMemory.store(a.min(b), dst, d + o);
        }
        return bound;
    }
}
