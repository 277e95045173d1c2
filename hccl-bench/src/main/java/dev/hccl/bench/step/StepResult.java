package dev.hccl.bench.step;

import java.util.Arrays;

/**
 * The timed steps of one way of synchronising, the same on every rank. For each step, each figure is the largest over
 * the ranks: a step ends for the job when its slowest rank ends it.
 *
 * @param backwardMs   the simulated backward pass asked for, in milliseconds.
 * @param mode         the {@link StepMode}'s name.
 * @param compression  the compression, {@code none} for the modes without.
 * @param bucketCapBytes   {@code GradientSync}'s bucket cap, autotune's choice where it tuned; 0 for the per-tensor
 *                     modes.
 * @param firstBucketBytes its first bucket's cap, likewise.
 * @param tuningSteps  the steps autotune took before the row's warm-up and timed steps; -1 without autotune.
 * @param collectives  the collectives a step issues.
 * @param wireBytes    the payload rank 0 put into a step's collectives.
 * @param fallbacks    the buckets rank 0 had to all-reduce again uncompressed, over the timed steps.
 * @param stepNanos    each step's time, from after a barrier to the last gradient synchronised.
 * @param computeNanos each step's simulated computation.
 * @param exposedNanos each step's time less its computation: the communication the backward pass did not hide.
 */
public record StepResult(
    double backwardMs, String mode, String compression, long bucketCapBytes, long firstBucketBytes, int tuningSteps,
    int collectives, long wireBytes, int fallbacks,
    long[] stepNanos, long[] computeNanos, long[] exposedNanos)
{
    /**
     * @param values at least one.
     * @return the median; the mean of the middle two for an even count.
     */
    static double median(final long[] values)
    {
        final long[] sorted = values.clone();
        Arrays.sort(sorted);
        final int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    }

    static long min(final long[] values)
    {
        return Arrays.stream(values).min().orElseThrow();
    }

    static long max(final long[] values)
    {
        return Arrays.stream(values).max().orElseThrow();
    }
}
