package dev.hccl.bench.step;

import dev.hccl.training.Compression;

/**
 * One row of the benchmark: a mode and, for the modes through {@code GradientSync}, a compression and a bucket cap,
 * or autotune.
 *
 * @param mode        the mode.
 * @param compression how the buckets travel; {@link Compression#none()} for the per-tensor modes.
 * @param bucketCap   {@code GradientSync}'s bucket cap, where autotune starts from; unused by the per-tensor modes.
 * @param autotune    whether {@code GradientSync} tunes its bucket sizes ({@code Autotune.defaults()}) before the
 *                    row's steps.
 */
record StepVariant(StepMode mode, Compression compression, long bucketCap, boolean autotune)
{
}
