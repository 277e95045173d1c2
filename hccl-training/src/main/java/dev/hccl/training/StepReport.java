package dev.hccl.training;

/**
 * What one {@link GradientSync} step cost, on this rank.
 *
 * @param step             the step's number, from 0.
 * @param buckets          the buckets reduced.
 * @param waitNanos        the time {@link GradientSync#await()} spent waiting for the buckets' collectives and
 *                         unpacking their results: the communication the backward pass did not hide.
 * @param wireBytes        the payload this rank put into the step's collectives: the buckets' bytes, half of them
 *                         under fp16 or bf16, 8 bytes a selected element under topK.
 * @param fallbacks        buckets of this step that a narrowing compression had to all-reduce again in FP32 (an
 *                         infinity, a NaN, or FP8's scale outgrown).
 * @param bucketCapBytes   the bucket cap of this step's buckets: the builder's, or the one autotune tried or chose.
 * @param firstBucketBytes the first bucket's cap of this step.
 * @param tuning           whether these caps were set ({@link Tuning#OFF}), tried or chosen by autotune.
 */
public record StepReport(
    long step, int buckets, long waitNanos, long wireBytes, int fallbacks, long bucketCapBytes, long firstBucketBytes,
    Tuning tuning)
{
    /** Where a step's bucket sizes came from. */
    public enum Tuning
    {
        /** The builder's, without autotune. */
        OFF,
        /** A trial of autotune: the sizes may change after the step. */
        TRIAL,
        /** Autotune's choice: the sizes stay. */
        CHOSEN
    }
}
