package dev.hccl.training;

/**
 * One trial of {@link GradientSync}'s bucket autotune ({@link Autotune}), the same on every rank.
 *
 * @param bucketCapBytes     the bucket cap tried.
 * @param firstBucketBytes   the first bucket's cap tried.
 * @param buckets            the buckets these caps made.
 * @param medianStepNanos  over the trial's measured steps, the median of each step's time on its slowest rank: from
 *                         the end of the step before (its {@code await}) to the end of this one.
 */
public record AutotuneTrial(long bucketCapBytes, long firstBucketBytes, int buckets, long medianStepNanos)
{
}
