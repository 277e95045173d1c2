package dev.hccl.api.testing;

import java.util.SplittableRandom;

/**
 * Test support for the seeded fuzzers: which cases a run covers, and each case's own random source.
 * <p>
 * A case draws only from a generator seeded from the run's seed and the case's number; a fuzzer whose cases share
 * state (a store's contents, a mesh's connections) starts it afresh at known cases. A failure names the seed and the
 * cases to rerun, {@code -Dhccl.fuzz.seed=S -Dhccl.fuzz.cases=A-N}: from where the state began, or the case alone.
 * {@code -Dhccl.fuzz.iterations=N} sets how many cases the suite covers. A module whose suite surefire runs several
 * times (hccl-transport-netty's, see its pom) gives each run its own share of the cases ({@code hccl.fuzz.slice} of
 * {@code hccl.fuzz.slices}), so that the suite covers every case once in the time of one run. Shared by the modules'
 * fuzzers through hccl-api's test jar.
 */
public final class FuzzCases
{
    /** The run's seed, decimal or 0x-hexadecimal. */
    public static final String SEED_PROPERTY = "hccl.fuzz.seed";
    /** How many cases the suite covers, over all its runs. */
    public static final String ITERATIONS_PROPERTY = "hccl.fuzz.iterations";
    /** Cases to run instead, {@code A-B} (both included) or {@code N}. */
    public static final String CASES_PROPERTY = "hccl.fuzz.cases";
    /** Which share of the cases this run covers, 0 to slices - 1. */
    public static final String SLICE_PROPERTY = "hccl.fuzz.slice";
    /** Into how many shares the cases are cut. */
    public static final String SLICES_PROPERTY = "hccl.fuzz.slices";

    private final long seed;
    private final long first;
    private final long end;

    private FuzzCases(final long seed, final long first, final long end)
    {
        this.seed = seed;
        this.first = first;
        this.end = end;
    }

    /**
     * The cases of this run, from the system properties.
     *
     * @param defaultSeed       the seed unless {@value #SEED_PROPERTY} is set.
     * @param defaultIterations the cases of the whole suite unless {@value #ITERATIONS_PROPERTY} is set.
     * @return the cases.
     */
    public static FuzzCases fromProperties(final long defaultSeed, final long defaultIterations)
    {
        final String seedText = System.getProperty(SEED_PROPERTY);
        final long seed = null == seedText || seedText.isBlank() ? defaultSeed : parseSeed(seedText.trim());
        final String only = System.getProperty(CASES_PROPERTY);
        if (null != only && !only.isBlank())
        {
            final String[] range = only.trim().split("-", 2);
            final long from = Long.parseLong(range[0].trim());
            return new FuzzCases(seed, from, 1 + (1 == range.length ? from : Long.parseLong(range[1].trim())));
        }
        final long iterations = Long.getLong(ITERATIONS_PROPERTY, defaultIterations);
        final int slices = Integer.getInteger(SLICES_PROPERTY, 1);
        final int slice = Integer.getInteger(SLICE_PROPERTY, 0);
        if (slices < 1 || slice < 0 || slice >= slices)
        {
            throw new IllegalArgumentException(SLICE_PROPERTY + " " + slice + " of " + SLICES_PROPERTY + " " + slices);
        }
        return new FuzzCases(seed, iterations * slice / slices, iterations * (slice + 1) / slices);
    }

    /**
     * Cases to run before the others, unchecked for allocation: the first cases of a JVM load classes and seed random
     * sources, which is no case's own cost.
     *
     * @param seed  their seed, not the run's.
     * @param count how many.
     * @return the cases.
     */
    public static FuzzCases warmUp(final long seed, final int count)
    {
        return new FuzzCases(seed, 0, count);
    }

    /**
     * @return the first case of this run.
     */
    public long first()
    {
        return first;
    }

    /**
     * @return one past the last case of this run.
     */
    public long end()
    {
        return end;
    }

    /**
     * @return how many cases this run covers.
     */
    public long count()
    {
        return end - first;
    }

    /**
     * The random source of one case: the same for the same seed and number, whatever ran before.
     *
     * @param index the case's number.
     * @return its generator.
     */
    public SplittableRandom random(final long index)
    {
        return new SplittableRandom(mix(seed ^ mix(index + 0x9E3779B97F4A7C15L)));
    }

    /**
     * How a failure names a case that depends on no other, and how to run it alone.
     *
     * @param index the case's number.
     * @return the words.
     */
    public String describe(final long index)
    {
        return describe(index, index);
    }

    /**
     * How a failure names a case, and how to run it again after the cases whose state it meets.
     *
     * @param index the case's number.
     * @param from  the first case of its state.
     * @return the words.
     */
    public String describe(final long index, final long from)
    {
        final String seedText = String.format("0x%016x", seed);
        return "seed " + seedText + ", case " + index + " (rerun with -D" + SEED_PROPERTY + "=" + seedText + " -D" +
            CASES_PROPERTY + "=" + (from == index ? Long.toString(index) : from + "-" + index) + ")";
    }

    /**
     * How a run names itself in its summary.
     *
     * @return the words.
     */
    public String describeRun()
    {
        return String.format("seed 0x%016x, cases %d to %d", seed, first, end - 1);
    }

    private static long parseSeed(final String text)
    {
        if (text.startsWith("0x") || text.startsWith("0X"))
        {
            return Long.parseUnsignedLong(text.substring(2), 16);
        }
        return Long.parseLong(text);
    }

    /** Stafford's 64-bit finalizer: neighbouring inputs give unrelated outputs. */
    private static long mix(final long value)
    {
        long z = value;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
