package dev.hccl.djl;

import ai.djl.Model;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.Trainer;
import ai.djl.training.TrainingConfig;
import dev.hccl.api.Communicator;
import dev.hccl.training.GradientSync;
import dev.hccl.training.GradientSyncBuilder;

import java.util.function.Consumer;

/**
 * A DJL {@link Trainer} whose every {@link #step()} applies the mean of all ranks' gradients, as a model wrapped in
 * PyTorch's {@code DistributedDataParallel} does: {@link #initialize} gives every rank rank 0's parameters (after
 * checking that the ranks built the same model), and each step all-reduces the gradients through a
 * {@link GradientSync} before the optimizer runs. It is a {@code Trainer}, so that DJL's {@code EasyTrain}, listeners
 * and evaluators work unchanged; its loss and evaluators report, at each epoch's end, the mean over the ranks.
 * <p>
 * DJL gives no per-parameter hook in its backward pass, nor a way to hand a trainer another parameter server, so
 * this subclass is the seam: the all-reduce runs in {@code step()}, after the whole backward pass.
 * <p>
 * Collective: every rank creates it, calls {@code initialize} and {@code step()} as often, in the same order (a
 * {@link DistributedSampler} gives every rank as many batches). A rank that fails or dies fails the others' next step
 * with an exception naming it.
 */
public final class DataParallelTrainer extends Trainer
{
    private final Communicator comm;
    private final Consumer<GradientSyncBuilder> gradientSettings;
    private GradientBridge bridge;

    DataParallelTrainer(
        final Communicator comm, final Model model, final TrainingConfig config,
        final Consumer<GradientSyncBuilder> gradientSettings)
    {
        super(model, new RankAveragedConfig(config, comm));
        this.comm = comm;
        this.gradientSettings = gradientSettings;
    }

    /**
     * Initializes the model as {@link Trainer#initialize} does, then, collectively, checks that every rank built the
     * same model and gives every rank rank 0's parameters. Parameters loaded before (a checkpoint on rank 0) are kept
     * and so reach every rank.
     *
     * @param shapes the input shapes, the same on every rank.
     * @throws dev.hccl.api.HcclException {@code E_MISMATCH} on every rank when the ranks' models differ.
     */
    @Override
    public void initialize(final Shape... shapes)
    {
        if (bridge != null)
        {
            throw new IllegalStateException("DataParallelTrainer.initialize on rank " + comm.rank() + ": already " +
                "initialized; create a new trainer to start again");
        }
        super.initialize(shapes);
        final ModelParameters parameters = new ModelParameters(getModel().getBlock().getParameters());
        parameters.checkSameOnEveryRank(comm, "DataParallelTrainer.initialize");
        ParameterBroadcast.fromRankZero(comm, parameters);
        bridge = GradientBridge.build(comm, parameters, gradientSettings);
    }

    /**
     * Averages the gradients over the ranks, then updates the parameters as {@link Trainer#step()} does; collective.
     *
     * @throws IllegalStateException      before {@link #initialize}.
     * @throws dev.hccl.api.HcclException when the all-reduce fails (a rank died, or called something else).
     */
    @Override
    public void step()
    {
        if (bridge == null)
        {
            throw new IllegalStateException("DataParallelTrainer.step on rank " + comm.rank() + ": call " +
                "trainer.initialize(inputShapes) on every rank before the first step");
        }
        bridge.allReduce();
        super.step();
    }

    /**
     * The helper the gradients travel through: its step reports, buckets and autotune trials.
     *
     * @return it.
     * @throws IllegalStateException before {@link #initialize}.
     */
    public GradientSync gradientSync()
    {
        if (bridge == null)
        {
            throw new IllegalStateException("DataParallelTrainer.gradientSync on rank " + comm.rank() + ": there is " +
                "none before trainer.initialize(inputShapes)");
        }
        return bridge.gradientSync();
    }

    /**
     * The communicator of the data-parallel ranks.
     *
     * @return it; it stays the caller's.
     */
    public Communicator communicator()
    {
        return comm;
    }

    /** Closes the gradient helper and the trainer; the communicator stays open. */
    @Override
    public void close()
    {
        try
        {
            if (bridge != null)
            {
                bridge.close();
            }
        }
        finally
        {
            super.close();
        }
    }
}
