package dev.hccl.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.evaluator.Evaluator;

/**
 * An evaluator (accuracy, top-k accuracy, ...) whose epoch figures are the mean over the ranks: it evaluates and
 * accumulates as its inner evaluator does, and after {@link EpochMetricsAveraging} has run at an epoch's end its
 * accumulators read the mean over the ranks ({@link RankAverage} says how it is weighted) until they are reset.
 * Between, they read this rank's own figures, so that progress lines cost no collective.
 */
public final class RankAveragedEvaluator extends Evaluator
{
    private final RankAverage average;

    /**
     * Wraps an evaluator.
     *
     * @param inner the evaluator; it keeps its name.
     */
    public RankAveragedEvaluator(final Evaluator inner)
    {
        super(inner.getName());
        this.average = new RankAverage(inner);
    }

    /**
     * The wrapped evaluator.
     *
     * @return it.
     */
    public Evaluator inner()
    {
        return average.inner();
    }

    RankAverage average()
    {
        return average;
    }

    @Override
    public NDArray evaluate(final NDList labels, final NDList predictions)
    {
        return average.inner().evaluate(labels, predictions);
    }

    @Override
    public void addAccumulator(final String key)
    {
        average.add(key);
    }

    @Override
    public void updateAccumulator(final String key, final NDList labels, final NDList predictions)
    {
        updateAccumulators(new String[] {key}, labels, predictions);
    }

    @Override
    public void updateAccumulators(final String[] keys, final NDList labels, final NDList predictions)
    {
        average.update(keys, labels, predictions);
    }

    @Override
    public void resetAccumulator(final String key)
    {
        average.reset(key);
    }

    @Override
    public float getAccumulator(final String key)
    {
        return average.value(key);
    }
}
