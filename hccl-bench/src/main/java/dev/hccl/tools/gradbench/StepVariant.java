package dev.hccl.tools.gradbench;

import dev.hccl.training.Compression;

/**
 * One row of the benchmark: a mode and, for the modes through {@code GradientSync}, a compression.
 *
 * @param mode        the mode.
 * @param compression how the buckets travel; {@link Compression#none()} for the per-tensor modes.
 */
record StepVariant(StepMode mode, Compression compression)
{
}
