package dev.hccl.training;

import dev.hccl.api.DataType;

import java.util.Locale;

/**
 * How a {@link GradientSync}'s buckets travel: as they are, as 16- or 8-bit floats, as the largest values alone, or
 * as a low-rank approximation. Every rank must choose the same; ranks that differ fail at build.
 * <p>
 * Compression trades accuracy for bytes on the wire: {@link #fp16()} and {@link #bf16()} halve them,
 * {@link #fp8e4m3()} and {@link #fp8e5m2()} quarter them (scaled per bucket), {@link #topK}
 * sends a fraction of the elements (as index and value, 8 bytes each) and keeps the rest for the next step,
 * {@link #powerSgd} sends two thin factors of a bucket seen as a matrix and keeps the rest for the next step.
 */
public final class Compression
{
    /** What the wire carries. */
    public enum Kind
    {
        /** {@link #none()}. */
        NONE(0),
        /** {@link #fp16()}. */
        FP16(1),
        /** {@link #bf16()}. */
        BF16(2),
        /** {@link #topK(double)}. */
        TOP_K(3),
        /** {@link #fp8e4m3()}. */
        FP8_E4M3(4),
        /** {@link #fp8e5m2()}. */
        FP8_E5M2(5),
        /** {@link #powerSgd(int)}. */
        POWER_SGD(6);

        /** In the settings that ranks compare at build. */
        final int code;

        Kind(final int code)
        {
            this.code = code;
        }
    }

    private static final Compression NONE = new Compression(Kind.NONE, 1.0, 0);
    private static final Compression FP16 = new Compression(Kind.FP16, 1.0, 0);
    private static final Compression BF16 = new Compression(Kind.BF16, 1.0, 0);
    private static final Compression FP8_E4M3 = new Compression(Kind.FP8_E4M3, 1.0, 0);
    private static final Compression FP8_E5M2 = new Compression(Kind.FP8_E5M2, 1.0, 0);

    private final Kind kind;
    private final double fraction;
    private final int rank;

    private Compression(final Kind kind, final double fraction, final int rank)
    {
        this.kind = kind;
        this.fraction = fraction;
        this.rank = rank;
    }

    /**
     * No compression: each bucket is all-reduced in the gradients' own type.
     *
     * @return the setting.
     */
    public static Compression none()
    {
        return NONE;
    }

    /**
     * FP32 gradients travel and are reduced as IEEE binary16: each hop widens to FP32, adds and narrows again.
     * Each rank's values are divided by the world size before narrowing, so that no partial sum exceeds the largest
     * value a rank sent and the sums cannot overflow where the gradients themselves fit. A bucket whose reduced result
     * still holds an infinity or a NaN is all-reduced again in FP32, by every rank alike, so an overflow is never
     * silently wrong. Values below about {@code 6e-8 * worldSize} are lost (FP16's smallest subnormal).
     *
     * @return the setting.
     */
    public static Compression fp16()
    {
        return FP16;
    }

    /**
     * FP32 gradients travel and are reduced as bfloat16 (FP32's range, 8 bits of precision), widening to FP32 at
     * each hop as {@link #fp16()} does.
     *
     * @return the setting.
     */
    public static Compression bf16()
    {
        return BF16;
    }

    /**
     * FP32 gradients as OCP FP8 E4M3 (3 fraction bits, largest 448), a quarter of the bytes, scaled per bucket from
     * the largest magnitude any rank had in the bucket in the previous step, and reduced in FP32 at each hop. A step
     * whose values outgrew the scale (by about 1.9x), or held an infinity or a NaN, repeats the bucket in FP32 on every
     * rank ({@link StepReport#fallbacks()}). About 1 decimal digit; values below about 2^-10 of the bucket's largest
     * vanish.
     *
     * @return the compression.
     */
    public static Compression fp8e4m3()
    {
        return FP8_E4M3;
    }

    /**
     * As {@link #fp8e4m3()} in FP8 E5M2 (2 fraction bits, largest 57344): less precise (under a decimal digit), a wider
     * range (values down to about 2^-17 of the bucket's largest), more growth tolerated before a fallback.
     *
     * @return the compression.
     */
    public static Compression fp8e5m2()
    {
        return FP8_E5M2;
    }

    /**
     * Each rank sends the {@code fraction} of each bucket's elements largest in magnitude (at least one) as
     * (index, value) pairs through an all-gather, and every rank adds them up in rank order. Error feedback: what a
     * rank did not send stays in its residual, which is added to its gradients in the next step, so that nothing is
     * lost, only late.
     *
     * @param fraction of the elements sent, in (0, 1].
     * @return the setting.
     * @throws IllegalArgumentException when {@code fraction} is outside (0, 1].
     */
    public static Compression topK(final double fraction)
    {
        if (!(fraction > 0 && fraction <= 1))
        {
            throw new IllegalArgumentException("Compression.topK(fraction): fraction must be in (0, 1], got " +
                fraction + "; 0.01 sends 1% of each bucket's elements");
        }
        return new Compression(Kind.TOP_K, fraction, 0);
    }

    /**
     * PowerSGD (Vogels et al., 2019), as PyTorch DDP's {@code batched_powerSGD_hook}: each bucket, seen as a
     * zero-padded near-square matrix M of n rows and m columns ({@code m = ceil(sqrt(count))}), travels as two thin
     * factors, P (n x rank) and Q (m x rank), each through an FP32 all-reduce, {@code (n + m) * rank * 4} bytes in
     * all instead of {@code 4 * count}. The result is the projection of the ranks' mean onto P's orthonormal columns.
     * Error feedback: what the approximation missed of this rank's gradients is added to them in the next step, so
     * that nothing is lost, only late. Warm start: each step's power iteration starts from the last step's Q, so that
     * the approximation improves from step to step. A bucket too small to gain ({@code (n + m) * rank >= count}) is
     * all-reduced as it is. Every rank ends with the same bits. A rank of 1 to 4 is typical.
     *
     * @param rank the approximation's rank, PyTorch's {@code matrix_approximation_rank}: at least 1.
     * @return the setting.
     * @throws IllegalArgumentException when {@code rank} is below 1.
     */
    public static Compression powerSgd(final int rank)
    {
        if (rank < 1)
        {
            throw new IllegalArgumentException("Compression.powerSgd(rank): rank must be at least 1, got " + rank +
                "; start from 1 and double it until the loss is good enough");
        }
        return new Compression(Kind.POWER_SGD, 1.0, rank);
    }

    /**
     * Parses the settings as a user writes them in a configuration or on a command line.
     *
     * @param text {@code none}, {@code fp16}, {@code bf16}, {@code fp8e4m3} (or {@code fp8}), {@code fp8e5m2},
     *             {@code topk:F} (also {@code topK(F)}, as {@link #toString()} writes it), F in (0, 1], or
     *             {@code powersgd:R} (also {@code powerSGD(R)}), R at least 1; case does not matter.
     * @return the setting.
     * @throws IllegalArgumentException for anything else, saying what is expected.
     */
    public static Compression parse(final String text)
    {
        final String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.startsWith("topk:") || t.startsWith("topk(") && t.endsWith(")"))
        {
            final String fraction = t.substring(5, t.endsWith(")") ? t.length() - 1 : t.length());
            try
            {
                return topK(Double.parseDouble(fraction));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("compression '" + text + "': the fraction must be a number, " +
                    "as in topk:0.01");
            }
        }
        if (t.startsWith("powersgd:") || t.startsWith("powersgd(") && t.endsWith(")"))
        {
            final String rank = t.substring(9, t.endsWith(")") ? t.length() - 1 : t.length());
            try
            {
                return powerSgd(Integer.parseInt(rank.trim()));
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("compression '" + text + "': the rank must be a whole number, " +
                    "as in powersgd:1");
            }
        }
        return switch (t)
        {
            case "none" -> none();
            case "fp16" -> fp16();
            case "bf16" -> bf16();
            case "fp8", "fp8e4m3" -> fp8e4m3();
            case "fp8e5m2" -> fp8e5m2();
            default -> throw new IllegalArgumentException("unknown compression '" + text +
                "'; choose none, fp16, bf16, fp8e4m3, fp8e5m2, topk:F with F in (0, 1] or powersgd:R with R >= 1");
        };
    }

    /**
     * @return what the wire carries.
     */
    public Kind kind()
    {
        return kind;
    }

    /**
     * @return the fraction of elements {@link #topK} sends; 1 for the others.
     */
    public double fraction()
    {
        return fraction;
    }

    /**
     * @return the rank of {@link #powerSgd}'s approximation; 0 for the others.
     */
    public int rank()
    {
        return rank;
    }

    /**
     * The 16-bit type the wire carries.
     *
     * @return FP16 or BF16; null for the kinds that do not narrow.
     */
    DataType wireType()
    {
        return switch (kind)
        {
            case FP16 -> DataType.FP16;
            case BF16 -> DataType.BF16;
            case FP8_E4M3 -> DataType.FP8_E4M3;
            case FP8_E5M2 -> DataType.FP8_E5M2;
            default -> null;
        };
    }

    /**
     * Whether this compression can carry gradients of {@code type}: all but {@link #none()} narrow, select or
     * factor FP32.
     *
     * @param type the gradients' type.
     * @return true when it can.
     */
    boolean accepts(final DataType type)
    {
        return kind == Kind.NONE || type == DataType.FP32;
    }

    /**
     * @return whether each bucket's codec keeps what it did not send for the next step (top-k, PowerSGD), which a
     *         change of buckets would drop.
     */
    boolean feedsErrorBack()
    {
        return kind == Kind.TOP_K || kind == Kind.POWER_SGD;
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof Compression c && c.kind == kind && Double.compare(c.fraction, fraction) == 0 &&
            c.rank == rank;
    }

    @Override
    public int hashCode()
    {
        return (kind.hashCode() * 31 + Double.hashCode(fraction)) * 31 + rank;
    }

    /**
     * As a user writes it: {@code none}, {@code fp16}, {@code bf16}, {@code fp8e4m3}, {@code topK(0.01)},
     * {@code powerSGD(1)}; {@link #parse} reads it back.
     *
     * @return the setting.
     */
    @Override
    public String toString()
    {
        return switch (kind)
        {
            case TOP_K -> "topK(" + fraction + ")";
            case POWER_SGD -> "powerSGD(" + rank + ")";
            default -> kind.name().toLowerCase(Locale.ROOT).replace("_", "");
        };
    }
}
