package dev.hccl.training;

import dev.hccl.api.Setting;

import java.util.Arrays;

/**
 * The settings of {@link GradientSync}'s bucket autotune, as Horovod's autotune finds its fusion buffer's size: over
 * the first steps of training the helper tries bucket sizes, measures each step's time (from one {@code await}'s end
 * to the next's, the slowest rank's), and keeps the fastest. The step's time, not only the communication it waits
 * for: where computation and communication share the cores, small buckets also slow the computation down, which only
 * the step's time shows.
 * <p>
 * The search: first each bucket cap of {@link #bucketCaps} with the builder's first-bucket size, then each
 * first-bucket size of {@link #firstBucketSizes} with the best cap. The builder's own sizes are the first trial, so the
 * choice is never worse than them as measured. Caps that cut the gradients into the same buckets as a size already
 * tried are skipped. Each trial runs {@link #warmupSteps} steps unmeasured (the new buckets' first steps), then
 * {@link #stepsPerTrial} measured; its figure is the median over those steps of the slowest rank's time. The first
 * trial runs while the JIT still compiles the step's code, so it is measured once more after the others, and that
 * figure is the one its sizes are judged by.
 * <p>
 * Every rank takes part alike: the trials follow the same schedule on every rank, and at each trial's end the ranks
 * all-reduce their times (a small blocking all-reduce inside {@code await}), so that every rank computes the same
 * figures and makes the same choice; no two ranks ever have different buckets.
 * <p>
 * Immutable; each setter returns a copy.
 */
public final class Autotune
{
    /**
     * {@code HCCL_AUTOTUNE}, which a launcher sets to turn autotune on with the defaults for every {@link GradientSync}
     * whose builder was not told otherwise; read through the communicator ({@link
     * dev.hccl.api.Communicator#setting}), so a value set on its {@code CommConfig} builder counts too. A helper with
     * {@link Compression#topK} or {@link Compression#powerSgd}, which autotune cannot serve, runs without it and rank
     * 0 says so in one WARN: a setting made for the whole job must not break code that never asked for it.
     */
    public static final Setting<Boolean> SETTING = Setting.flag("HCCL_AUTOTUNE",
        "1: GradientSync tunes its bucket sizes over the first steps (Autotune.defaults()) unless its builder says " +
        "otherwise; skipped, with a WARN, for top-k and PowerSGD compression");

    private static final long MIB = 1L << 20;
    private static final Autotune DEFAULTS = new Autotune(
        new long[] {MIB, 2 * MIB, 4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB, 64 * MIB},
        new long[] {256 * 1024, MIB, 4 * MIB, 16 * MIB}, 2, 10);

    private final long[] bucketCaps;
    private final long[] firstBucketSizes;
    private final int warmupSteps;
    private final int stepsPerTrial;

    private Autotune(final long[] bucketCaps, final long[] firstBucketSizes, final int warmupSteps,
        final int stepsPerTrial)
    {
        this.bucketCaps = bucketCaps;
        this.firstBucketSizes = firstBucketSizes;
        this.warmupSteps = warmupSteps;
        this.stepsPerTrial = stepsPerTrial;
    }

    /**
     * Caps of 1, 2, 4, 8, 16, 32 and 64 MiB, first buckets of 256 KiB, 1, 4 and 16 MiB, 2 warm-up steps and 10
     * measured steps a trial (Horovod's autotune measures 10 steps a sample): at most 11 trials, 132 steps.
     *
     * @return the defaults.
     */
    public static Autotune defaults()
    {
        return DEFAULTS;
    }

    /**
     * @param bytes the bucket caps to try, each at least 1 byte, at least one.
     * @return a copy with these caps.
     */
    public Autotune bucketCaps(final long... bytes)
    {
        return new Autotune(sizes("bucketCaps", bytes), firstBucketSizes, warmupSteps, stepsPerTrial);
    }

    /**
     * @param bytes the first-bucket caps to try, each at least 1 byte, at least one.
     * @return a copy with these sizes.
     */
    public Autotune firstBucketSizes(final long... bytes)
    {
        return new Autotune(bucketCaps, sizes("firstBucketSizes", bytes), warmupSteps, stepsPerTrial);
    }

    /**
     * @param steps unmeasured steps at the start of each trial, at least 0.
     * @return a copy with this count.
     */
    public Autotune warmupSteps(final int steps)
    {
        if (steps < 0)
        {
            throw new IllegalArgumentException("Autotune.warmupSteps must be at least 0, got " + steps);
        }
        return new Autotune(bucketCaps, firstBucketSizes, steps, stepsPerTrial);
    }

    /**
     * @param steps measured steps of each trial, at least 1; more steps judge more surely on a noisy machine.
     * @return a copy with this count.
     */
    public Autotune stepsPerTrial(final int steps)
    {
        if (steps < 1)
        {
            throw new IllegalArgumentException("Autotune.stepsPerTrial must be at least 1, got " + steps);
        }
        return new Autotune(bucketCaps, firstBucketSizes, warmupSteps, steps);
    }

    /**
     * @return the caps tried, in order.
     */
    public long[] bucketCaps()
    {
        return bucketCaps.clone();
    }

    /**
     * @return the first-bucket sizes tried, in order.
     */
    public long[] firstBucketSizes()
    {
        return firstBucketSizes.clone();
    }

    /**
     * @return the unmeasured steps of each trial.
     */
    public int warmupSteps()
    {
        return warmupSteps;
    }

    /**
     * @return the measured steps of each trial.
     */
    public int stepsPerTrial()
    {
        return stepsPerTrial;
    }

    /** What the ranks compare at build, so that all search alike. */
    long fingerprint()
    {
        return ((Arrays.hashCode(bucketCaps) * 31L + Arrays.hashCode(firstBucketSizes)) * 31 + warmupSteps) * 31 +
            stepsPerTrial;
    }

    private static long[] sizes(final String name, final long[] bytes)
    {
        if (bytes == null || bytes.length == 0 || Arrays.stream(bytes).anyMatch(b -> b < 1))
        {
            throw new IllegalArgumentException("Autotune." + name + " takes at least one size, each at least 1 byte, " +
                "got " + Arrays.toString(bytes));
        }
        return bytes.clone();
    }

    @Override
    public String toString()
    {
        return "Autotune[bucketCaps=" + Arrays.toString(bucketCaps) + ", firstBucketSizes=" +
            Arrays.toString(firstBucketSizes) + ", warmupSteps=" + warmupSteps + ", stepsPerTrial=" + stepsPerTrial +
            "]";
    }
}
