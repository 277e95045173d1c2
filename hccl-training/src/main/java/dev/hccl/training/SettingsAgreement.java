package dev.hccl.training;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.util.List;
import java.util.Locale;
import java.util.function.IntToLongFunction;
import java.util.function.LongFunction;

/**
 * The check, at build, that every rank made its {@link GradientSync} alike: the same settings and the same gradient
 * sizes, without which buckets would differ and the all-reduces would mix unrelated values. Two all-gathers, the
 * settings then the sizes (the second only where the counts agree); every rank sees every rank's values, so every
 * rank fails alike, naming the first rank that differs from rank 0 and both values.
 */
final class SettingsAgreement
{
    /** One compared setting: its name, its value on this rank, and how to show a value. */
    private record Field(String name, long value, LongFunction<String> show)
    {
    }

    private SettingsAgreement()
    {
    }

    /**
     * @param comm             the communicator.
     * @param localProblem     why this rank refuses its own gradients, or null: said after the exchange, so that
     *                         the other ranks fail too instead of waiting for this one.
     * @param type             the gradients' type.
     * @param compression      the setting.
     * @param average          the setting.
     * @param firstBucketBytes the setting.
     * @param bucketCapBytes   the setting.
     * @param autotune         the autotune settings' fingerprint, 0 without.
     * @param elementCounts    each gradient's elements, in registration order; at least one gradient.
     * @throws IllegalArgumentException with {@code localProblem} on this rank, when there is one.
     * @throws HcclException {@link ErrorCode#E_PARA} on the others when a rank refused its gradients,
     *                       {@link ErrorCode#E_MISMATCH} on every rank when any rank differs from rank 0.
     */
    static void check(
        final Communicator comm, final String localProblem, final DataType type, final Compression compression,
        final boolean average, final long firstBucketBytes, final long bucketCapBytes, final long autotune,
        final long[] elementCounts)
    {
        final List<Field> fields = List.of(
            new Field("accepted", localProblem == null ? 1 : 0, v -> Boolean.toString(v != 0)),
            new Field("gradient count", elementCounts.length, Long::toString),
            new Field("type", type.ordinal(), v -> DataType.values()[(int)v].name()),
            new Field("compression", compression.kind().code, SettingsAgreement::showCompression),
            new Field("topK fraction", Double.doubleToLongBits(compression.fraction()),
                v -> Double.toString(Double.longBitsToDouble(v))),
            new Field("powerSGD rank", compression.rank(), Long::toString),
            new Field("average", average ? 1 : 0, v -> Boolean.toString(v != 0)),
            new Field("firstBucketBytes", firstBucketBytes, Long::toString),
            new Field("bucketCapBytes", bucketCapBytes, Long::toString),
            new Field("autotune", autotune, v -> v == 0 ? "off" : "on (settings " + Long.toHexString(v) + ")"));
        final long[] own = fields.stream().mapToLong(Field::value).toArray();
        final LongBuffer all = allGather(comm, own);
        if (localProblem != null)
        {
            throw new IllegalArgumentException(localProblem);
        }
        for (int r = 0; r < comm.worldSize(); r++)
        {
            if (all.get(r * own.length) == 0)
            {
                throw new HcclException(ErrorCode.E_PARA, "GradientSync.build on rank " + comm.rank() + ": rank " + r +
                    " refused its gradients (its own error says why), so no rank can build");
            }
        }
        for (int f = 0; f < fields.size(); f++)
        {
            final Field field = fields.get(f);
            final int at = f;
            compare(comm, r -> all.get(r * own.length + at), (first, r) -> field.name() + ": rank 0 has " +
                field.show().apply(first) + ", rank " + r + " has " + field.show().apply(all.get(r * own.length + at)));
        }
        final LongBuffer sizes = allGather(comm, elementCounts);
        for (int g = 0; g < elementCounts.length; g++)
        {
            final int gradient = g;
            compare(comm, r -> sizes.get(r * elementCounts.length + gradient), (first, r) -> "gradient " + gradient +
                " has " + first + " elements on rank 0 and " + sizes.get(r * elementCounts.length + gradient) +
                " on rank " + r);
        }
    }

    /** Says how rank {@code rank} differs from rank 0. */
    private interface Difference
    {
        String describe(long rank0Value, int rank);
    }

    private static void compare(final Communicator comm, final IntToLongFunction valueOf, final Difference difference)
    {
        final long first = valueOf.applyAsLong(0);
        for (int r = 1; r < comm.worldSize(); r++)
        {
            if (valueOf.applyAsLong(r) != first)
            {
                throw new HcclException(ErrorCode.E_MISMATCH, "GradientSync.build on rank " + comm.rank() +
                    ": the ranks' GradientSync settings differ, " + difference.describe(first, r) +
                    "; every rank must build it with the same settings over the same gradient sizes");
            }
        }
    }

    private static LongBuffer allGather(final Communicator comm, final long[] values)
    {
        final ByteBuffer send = ByteBuffer.allocateDirect(values.length * 8).order(ByteOrder.nativeOrder());
        send.asLongBuffer().put(values);
        final ByteBuffer recv = ByteBuffer.allocateDirect(Math.multiplyExact(values.length * 8, comm.worldSize()))
            .order(ByteOrder.nativeOrder());
        comm.allGather(send, recv, values.length, DataType.INT64);
        return recv.asLongBuffer();
    }

    private static String showCompression(final long code)
    {
        for (final Compression.Kind kind : Compression.Kind.values())
        {
            if (kind.code == code)
            {
                return switch (kind)
                {
                    case TOP_K -> "topK";
                    case POWER_SGD -> "powerSGD";
                    default -> kind.name().toLowerCase(Locale.ROOT).replace("_", "");
                };
            }
        }
        return "code " + code;
    }
}
