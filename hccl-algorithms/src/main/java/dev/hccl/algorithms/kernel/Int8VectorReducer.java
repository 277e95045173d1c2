package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vector API kernels for {@link DataType#INT8} and {@link DataType#UINT8}, matching {@link Int8Reducer}: sum and
 * product keep the low 8 bits, the same for signed and unsigned operands; max and min compare signed or unsigned.
 * <p>
 * JDK 17's Vector API has no unsigned max or min, so the unsigned ones flip the sign bit of both operands, which maps
 * unsigned order onto signed order, take the signed max or min, and flip the result back.
 */
final class Int8VectorReducer extends AbstractVectorReducer
{
    private static final VectorSpecies<Byte> SPECIES = ByteVector.SPECIES_PREFERRED;
    private static final byte SIGN_BIT = (byte)0x80;

    private final boolean unsigned;

    /**
     * @param scalar the {@link DataType#INT8} or {@link DataType#UINT8} scalar kernel of the same operator.
     */
    Int8VectorReducer(final AbstractReducer scalar)
    {
        super(scalar);
        this.unsigned = scalar.type == DataType.UINT8;
    }

    @Override
    int reduceVectors(final Object dst, final int d, final Object left, final int l, final Object right, final int r,
        final int count)
    {
        return switch (op)
        {
            case SUM -> sum(dst, d, left, l, right, r, count);
            case PROD -> prod(dst, d, left, l, right, r, count);
            case MAX -> unsigned ? maxUnsigned(dst, d, left, l, right, r, count)
                : max(dst, d, left, l, right, r, count);
            case MIN -> unsigned ? minUnsigned(dst, d, left, l, right, r, count)
                : min(dst, d, left, l, right, r, count);
            default -> throw unsupported(op);
        };
    }

    static int sum(final Object dst, final int d, final Object left, final int l, final Object right, final int r,
        final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final ByteVector a = VectorMemory.bytes(SPECIES, left, l + i);
            final ByteVector b = VectorMemory.bytes(SPECIES, right, r + i);
            VectorMemory.store(a.add(b), dst, d + i);
        }
        return bound;
    }

    static int prod(final Object dst, final int d, final Object left, final int l, final Object right, final int r,
        final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final ByteVector a = VectorMemory.bytes(SPECIES, left, l + i);
            final ByteVector b = VectorMemory.bytes(SPECIES, right, r + i);
            VectorMemory.store(a.mul(b), dst, d + i);
        }
        return bound;
    }

    static int max(final Object dst, final int d, final Object left, final int l, final Object right, final int r,
        final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final ByteVector a = VectorMemory.bytes(SPECIES, left, l + i);
            final ByteVector b = VectorMemory.bytes(SPECIES, right, r + i);
            VectorMemory.store(a.max(b), dst, d + i);
        }
        return bound;
    }

    static int min(final Object dst, final int d, final Object left, final int l, final Object right, final int r,
        final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final ByteVector a = VectorMemory.bytes(SPECIES, left, l + i);
            final ByteVector b = VectorMemory.bytes(SPECIES, right, r + i);
            VectorMemory.store(a.min(b), dst, d + i);
        }
        return bound;
    }

    static int maxUnsigned(
        final Object dst, final int d, final Object left, final int l, final Object right, final int r, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final ByteVector a = VectorMemory.bytes(SPECIES, left, l + i);
            final ByteVector b = VectorMemory.bytes(SPECIES, right, r + i);
            final ByteVector result = a.lanewise(VectorOperators.XOR, SIGN_BIT)
                .max(b.lanewise(VectorOperators.XOR, SIGN_BIT))
                .lanewise(VectorOperators.XOR, SIGN_BIT);
            VectorMemory.store(result, dst, d + i);
        }
        return bound;
    }

    static int minUnsigned(
        final Object dst, final int d, final Object left, final int l, final Object right, final int r, final int count)
    {
        final int bound = SPECIES.loopBound(count);
        for (int i = 0; i < bound; i += SPECIES.length())
        {
            final ByteVector a = VectorMemory.bytes(SPECIES, left, l + i);
            final ByteVector b = VectorMemory.bytes(SPECIES, right, r + i);
            final ByteVector result = a.lanewise(VectorOperators.XOR, SIGN_BIT)
                .min(b.lanewise(VectorOperators.XOR, SIGN_BIT))
                .lanewise(VectorOperators.XOR, SIGN_BIT);
            VectorMemory.store(result, dst, d + i);
        }
        return bound;
    }
}
