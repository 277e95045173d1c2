package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vector API kernels for {@link DataType#INT16}: lanewise 16-bit arithmetic wraps around exactly as
 * {@link Int16Reducer}'s truncation of {@code int} arithmetic does (the low 16 bits of a sum or product depend only on
 * the low 16 bits of the operands).
 */
final class Int16VectorReducer extends AbstractVectorReducer
{
    private static final VectorSpecies<Short> SPECIES = ShortVector.SPECIES_PREFERRED;

    /**
     * @param scalar the {@link DataType#INT16} scalar kernel of the same operator.
     */
    Int16VectorReducer(final AbstractReducer scalar)
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
            final int o = i << 1;
            final ShortVector a = VectorMemory.shorts(SPECIES, dst, d + o);
            final ShortVector b = VectorMemory.shorts(SPECIES, src, s + o);
            VectorMemory.store(a.add(b), dst, d + o);
        }
        return bound;
    }

    static int prod(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 1;
            final ShortVector a = VectorMemory.shorts(SPECIES, dst, d + o);
            final ShortVector b = VectorMemory.shorts(SPECIES, src, s + o);
            VectorMemory.store(a.mul(b), dst, d + o);
        }
        return bound;
    }

    static int max(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 1;
            final ShortVector a = VectorMemory.shorts(SPECIES, dst, d + o);
            final ShortVector b = VectorMemory.shorts(SPECIES, src, s + o);
            VectorMemory.store(a.max(b), dst, d + o);
        }
        return bound;
    }

    static int min(final Object dst, final int d, final Object src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 1;
            final ShortVector a = VectorMemory.shorts(SPECIES, dst, d + o);
            final ShortVector b = VectorMemory.shorts(SPECIES, src, s + o);
            VectorMemory.store(a.min(b), dst, d + o);
        }
        return bound;
    }
}
