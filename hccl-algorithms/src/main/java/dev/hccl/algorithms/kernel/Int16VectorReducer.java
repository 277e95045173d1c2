package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorSpecies;

import java.nio.ByteBuffer;

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
    int reduceVectors(final ByteBuffer dst, final int d, final ByteBuffer src, final int s, final int count)
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

    static int sum(final ByteBuffer dst, final int d, final ByteBuffer src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 1;
            final ShortVector a = ShortVector.fromByteBuffer(SPECIES, dst, d + o, NATIVE);
            final ShortVector b = ShortVector.fromByteBuffer(SPECIES, src, s + o, NATIVE);
            a.add(b).intoByteBuffer(dst, d + o, NATIVE);
        }
        return bound;
    }

    static int prod(final ByteBuffer dst, final int d, final ByteBuffer src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 1;
            final ShortVector a = ShortVector.fromByteBuffer(SPECIES, dst, d + o, NATIVE);
            final ShortVector b = ShortVector.fromByteBuffer(SPECIES, src, s + o, NATIVE);
            a.mul(b).intoByteBuffer(dst, d + o, NATIVE);
        }
        return bound;
    }

    static int max(final ByteBuffer dst, final int d, final ByteBuffer src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 1;
            final ShortVector a = ShortVector.fromByteBuffer(SPECIES, dst, d + o, NATIVE);
            final ShortVector b = ShortVector.fromByteBuffer(SPECIES, src, s + o, NATIVE);
            a.max(b).intoByteBuffer(dst, d + o, NATIVE);
        }
        return bound;
    }

    static int min(final ByteBuffer dst, final int d, final ByteBuffer src, final int s, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final int o = i << 1;
            final ShortVector a = ShortVector.fromByteBuffer(SPECIES, dst, d + o, NATIVE);
            final ShortVector b = ShortVector.fromByteBuffer(SPECIES, src, s + o, NATIVE);
            a.min(b).intoByteBuffer(dst, d + o, NATIVE);
        }
        return bound;
    }
}
