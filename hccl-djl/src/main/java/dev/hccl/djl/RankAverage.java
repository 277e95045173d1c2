package dev.hccl.djl;

import ai.djl.ndarray.NDList;
import ai.djl.training.evaluator.Evaluator;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What an evaluator wrapped by {@link RankAveragedEvaluator} or {@link RankAveragedLoss} keeps besides its inner
 * evaluator's accumulators: how many batches each accumulator took on this rank, the weight of its value in the mean
 * over the ranks, and that mean once {@link EpochMetricsAveraging} has taken it, until the accumulator is reset.
 * <p>
 * Weighting by batches is exact for DJL's losses, whose accumulator is the mean of the batches' losses; for an
 * evaluator that counts instances (accuracy) it is exact when every rank's batches are the same size, as
 * {@link DistributedSampler} makes them.
 */
final class RankAverage
{
    private final Evaluator inner;
    private final Map<String, Long> batches = new ConcurrentHashMap<>();
    private final Map<String, Float> means = new ConcurrentHashMap<>();

    RankAverage(final Evaluator inner)
    {
        this.inner = inner;
    }

    Evaluator inner()
    {
        return inner;
    }

    /** The wrapper's {@code addAccumulator}. */
    void add(final String key)
    {
        inner.addAccumulator(key);
        batches.put(key, 0L);
        means.remove(key);
    }

    /** The wrapper's {@code updateAccumulators}: one batch more for each key. */
    void update(final String[] keys, final NDList labels, final NDList predictions)
    {
        inner.updateAccumulators(keys, labels, predictions);
        for (final String key : keys)
        {
            batches.merge(key, 1L, Long::sum);
            means.remove(key);
        }
    }

    /** The wrapper's {@code resetAccumulator}. */
    void reset(final String key)
    {
        inner.resetAccumulator(key);
        batches.put(key, 0L);
        means.remove(key);
    }

    /**
     * @param key an accumulator.
     * @return whether this rank has it.
     */
    boolean has(final String key)
    {
        return batches.containsKey(key);
    }

    /**
     * @param key an accumulator this rank has.
     * @return the batches it took on this rank since its reset.
     */
    long batches(final String key)
    {
        return batches.getOrDefault(key, 0L);
    }

    /** Holds the mean over the ranks until the accumulator changes. */
    void averaged(final String key, final float mean)
    {
        means.put(key, mean);
    }

    /**
     * @param key an accumulator.
     * @return the mean over the ranks once taken (and the accumulator unchanged since), else this rank's value.
     */
    float value(final String key)
    {
        final Float mean = means.get(key);
        return mean != null ? mean : inner.getAccumulator(key);
    }
}
