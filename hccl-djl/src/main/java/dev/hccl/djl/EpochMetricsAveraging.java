package dev.hccl.djl;

import ai.djl.training.Trainer;
import ai.djl.training.evaluator.Evaluator;
import ai.djl.training.listener.EvaluatorTrainingListener;
import ai.djl.training.listener.TrainingListenerAdapter;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * At each epoch's end, before any other listener reads them, replaces the epoch figures (training and validation) of
 * the trainer's rank-averaged loss and evaluators by their mean over the ranks, with one all-reduce: DJL's
 * {@link EvaluatorTrainingListener}, its logging and the {@code TrainingResult} then report the job's figures, the
 * same on every rank. The trainer puts it first among the listeners.
 * <p>
 * Collective: {@code onEpoch} must run on every rank, as {@code EasyTrain.fit} runs it; every rank must have the same
 * evaluators, as the same configuration gives them.
 */
final class EpochMetricsAveraging extends TrainingListenerAdapter
{
    private static final String[] KEYS = {EvaluatorTrainingListener.TRAIN_EPOCH, EvaluatorTrainingListener.VALIDATE_EPOCH};

    private final Communicator comm;

    EpochMetricsAveraging(final Communicator comm)
    {
        this.comm = comm;
    }

    @Override
    public void onEpoch(final Trainer trainer)
    {
        final List<RankAverage> averages = new ArrayList<>();
        for (final Evaluator evaluator : trainer.getEvaluators())
        {
            if (evaluator instanceof RankAveragedEvaluator)
            {
                averages.add(((RankAveragedEvaluator)evaluator).average());
            }
            else if (evaluator instanceof RankAveragedLoss)
            {
                averages.add(((RankAveragedLoss)evaluator).average());
            }
        }
        average(averages);
    }

    /** Sums (value x batches, batches) of every accumulator over the ranks, in one all-reduce. */
    void average(final List<RankAverage> averages)
    {
        final int slots = averages.size() * KEYS.length;
        if (slots == 0)
        {
            return;
        }
        final ByteBuffer sums = ByteBuffer.allocateDirect(slots * 2 * Double.BYTES).order(ByteOrder.nativeOrder());
        for (final RankAverage average : averages)
        {
            for (final String key : KEYS)
            {
                final long batches = average.has(key) ? average.batches(key) : 0;
                // A rank without batches weighs nothing (and its NaN, no value, must not poison the sum).
                sums.putDouble(batches == 0 ? 0 : (double)average.inner().getAccumulator(key) * batches);
                sums.putDouble(batches);
            }
        }
        sums.flip();
        comm.allReduce(sums, sums, slots * 2L, DataType.FP64, ReduceOp.SUM);
        int slot = 0;
        for (final RankAverage average : averages)
        {
            for (final String key : KEYS)
            {
                final double sum = sums.getDouble(slot * 2 * Double.BYTES);
                final double batches = sums.getDouble((slot * 2 + 1) * Double.BYTES);
                slot++;
                if (average.has(key))
                {
                    average.averaged(key, batches == 0 ? Float.NaN : (float)(sum / batches));
                }
            }
        }
    }
}
