package dev.hccl.training;

/**
 * One trial of {@link GradientSync}'s bucket autotune ({@link Autotune}), the same on every rank.
 *
 * @param bucketCapBytes     the bucket cap tried.
 * @param firstBucketBytes   the first bucket's cap tried.
 * @param buckets            the buckets these caps made.
 * @param medianExposedNanos over the trial's measured steps, the median of each step's exposed communication on its
 *                           slowest rank: the time the training thread spent in {@code markReady} and {@code await}.
 */
public record AutotuneTrial(long bucketCapBytes, long firstBucketBytes, int buckets, long medianExposedNanos)
{
}
