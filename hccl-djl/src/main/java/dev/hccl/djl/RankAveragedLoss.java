package dev.hccl.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.loss.Loss;

/**
 * A loss whose epoch figures are the mean over the ranks, as {@link RankAveragedEvaluator} is for other evaluators:
 * the trainer's loss must be a {@link Loss}, so this one is. It computes what its inner loss computes; the gradient is
 * of this rank's batch alone, and the trainer averages the gradients.
 */
public final class RankAveragedLoss extends Loss
{
    private final RankAverage average;
    private final Loss inner;

    /**
     * Wraps a loss.
     *
     * @param inner the loss; it keeps its name.
     */
    public RankAveragedLoss(final Loss inner)
    {
        super(inner.getName());
        this.inner = inner;
        this.average = new RankAverage(inner);
    }

    /**
     * The wrapped loss.
     *
     * @return it.
     */
    public Loss inner()
    {
        return inner;
    }

    RankAverage average()
    {
        return average;
    }

    @Override
    public NDArray evaluate(final NDList labels, final NDList predictions)
    {
        return inner.evaluate(labels, predictions);
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
