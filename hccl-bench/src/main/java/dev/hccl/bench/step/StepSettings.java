package dev.hccl.bench.step;

import java.util.List;

/**
 * The benchmark's checked settings.
 *
 * @param model            the gradient list.
 * @param warmups          untimed steps before each variant's timed ones, at least 0.
 * @param iterations       timed steps per variant, at least 1.
 * @param backwardMs       the simulated backward passes, in milliseconds, each at least 0: one set of rows each.
 * @param compute          how the simulated backward pass spends its time.
 * @param variants         the rows of each set, in order.
 * @param bucketCaps       {@code GradientSync}'s bucket caps: a row for each.
 * @param autotune         whether each set ends with an overlap row whose bucket sizes autotune finds.
 * @param firstBucketBytes {@code GradientSync}'s first bucket cap.
 * @param views            whether {@code GradientSync} allocates the gradients as views of its buckets.
 */
record StepSettings(
    ModelGradients model, int warmups, int iterations, List<Double> backwardMs, SimulatedBackward.Compute compute,
    List<StepVariant> variants, List<Long> bucketCaps, boolean autotune, long firstBucketBytes, boolean views)
{
    /** Checks the ranges. */
    StepSettings
    {
        if (warmups < 0 || iterations < 1)
        {
            throw new IllegalArgumentException("-w must be at least 0 and -n at least 1, got " + warmups + " and " +
                iterations);
        }
        if (backwardMs.isEmpty() || backwardMs.stream().anyMatch(ms -> !(ms >= 0)))
        {
            throw new IllegalArgumentException("--backward-ms must be at least 0, got " + backwardMs);
        }
        if (variants.isEmpty())
        {
            throw new IllegalArgumentException("--modes selects no mode");
        }
        if (bucketCaps.isEmpty() || bucketCaps.stream().anyMatch(c -> c < 1) || firstBucketBytes < 1)
        {
            throw new IllegalArgumentException("--bucket-cap and --first-bucket must be at least 1 byte");
        }
        backwardMs = List.copyOf(backwardMs);
        variants = List.copyOf(variants);
        bucketCaps = List.copyOf(bucketCaps);
    }

    /**
     * @return the first bucket cap, which the cost model's lines price.
     */
    long bucketCapBytes()
    {
        return bucketCaps.get(0);
    }
}
