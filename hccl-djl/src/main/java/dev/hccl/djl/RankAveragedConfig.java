package dev.hccl.djl;

import ai.djl.Device;
import ai.djl.nn.Parameter;
import ai.djl.training.TrainingConfig;
import ai.djl.training.evaluator.Evaluator;
import ai.djl.training.initializer.Initializer;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.util.PairList;
import dev.hccl.api.Communicator;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.function.Predicate;

/**
 * The user's training configuration as a data-parallel trainer needs it: its loss and evaluators wrapped so that
 * their epoch figures are the mean over the ranks, and {@link EpochMetricsAveraging} first among its listeners, so
 * that it has taken those means before any of the user's listeners reads them. Everything else is the user's, read
 * when the trainer asks.
 */
final class RankAveragedConfig implements TrainingConfig
{
    private final TrainingConfig config;
    private final Loss loss;
    private final List<Evaluator> evaluators;
    private final List<TrainingListener> listeners;

    RankAveragedConfig(final TrainingConfig config, final Communicator comm)
    {
        this.config = config;
        final Device[] devices = config.getDevices();
        if (devices == null || devices.length != 1)
        {
            throw new IllegalArgumentException("DataParallel.newTrainer on rank " + comm.rank() + ": the training " +
                "configuration names " + (devices == null ? "no" : Integer.toString(devices.length)) + " devices " +
                Arrays.toString(devices) + "; a data-parallel rank trains on one: give optDevices(new Device[] " +
                "{Device.cpu()}) and start one rank for each device");
        }
        final Loss own = config.getLossFunction();
        this.loss = own == null ? null : own instanceof RankAveragedLoss ? own : new RankAveragedLoss(own);
        final List<Evaluator> wrapped = new ArrayList<>();
        for (final Evaluator evaluator : config.getEvaluators())
        {
            wrapped.add(evaluator instanceof RankAveragedEvaluator || evaluator instanceof RankAveragedLoss ?
                evaluator : evaluator instanceof Loss ? new RankAveragedLoss((Loss)evaluator) :
                new RankAveragedEvaluator(evaluator));
        }
        this.evaluators = List.copyOf(wrapped);
        final List<TrainingListener> all = new ArrayList<>();
        all.add(new EpochMetricsAveraging(comm));
        all.addAll(config.getTrainingListeners());
        this.listeners = List.copyOf(all);
    }

    @Override
    public Device[] getDevices()
    {
        return config.getDevices();
    }

    @Override
    public PairList<Initializer, Predicate<Parameter>> getInitializers()
    {
        return config.getInitializers();
    }

    @Override
    public Optimizer getOptimizer()
    {
        return config.getOptimizer();
    }

    @Override
    public Loss getLossFunction()
    {
        return loss;
    }

    @Override
    public ExecutorService getExecutorService()
    {
        return config.getExecutorService();
    }

    @Override
    public List<Evaluator> getEvaluators()
    {
        return evaluators;
    }

    @Override
    public List<TrainingListener> getTrainingListeners()
    {
        return listeners;
    }
}
