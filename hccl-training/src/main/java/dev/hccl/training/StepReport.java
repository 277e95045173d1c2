package dev.hccl.training;

/**
 * What one {@link GradientSync} step cost, on this rank.
 *
 * @param step      the step's number, from 0.
 * @param buckets   the buckets reduced.
 * @param waitNanos the time {@link GradientSync#await()} spent waiting for the buckets' collectives and unpacking
 *                  their results: the communication the backward pass did not hide.
 * @param wireBytes the payload this rank put into the step's collectives: the buckets' bytes, half of them under
 *                  fp16 or bf16, 8 bytes a selected element under topK.
 * @param fallbacks buckets of this step that fp16 or bf16 had to all-reduce again in FP32 (an infinity or a NaN).
 */
public record StepReport(long step, int buckets, long waitNanos, long wireBytes, int fallbacks)
{
}
