package dev.hccl.djl;

import ai.djl.Model;
import ai.djl.training.TrainingConfig;
import dev.hccl.api.Communicator;
import dev.hccl.training.GradientSyncBuilder;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * Data-parallel training of a DJL model over a communicator, as PyTorch's {@code DistributedDataParallel} and
 * {@code DistributedSampler} do it: every rank holds the whole model, trains on its shard of each global batch, and
 * every step applies the mean of all ranks' gradients, so that N ranks with batch B step as one process with batch
 * N x B.
 * <pre>{@code
 * try (Communicator comm = Hccl.init();
 *      Model model = Model.newInstance("cnn")) {
 *     model.setBlock(block);
 *     DataParallel ddp = DataParallel.over(comm);
 *     try (Trainer trainer = ddp.newTrainer(model, config)) {     // instead of model.newTrainer(config)
 *         trainer.initialize(new Shape(batch, 1, 28, 28));        // rank 0's parameters on every rank
 *         ArrayDataset data = new ArrayDataset.Builder().setData(x).optLabels(y)
 *             .setSampling(ddp.sampler(batch, 42)).build();       // this rank's shard, reshuffled each epoch
 *         EasyTrain.fit(trainer, epochs, data, null);               // loss and accuracy: the mean over the ranks
 *     }
 * }
 * }</pre>
 * The communicator stays the caller's: close it after the trainer.
 */
public final class DataParallel
{
    private final Communicator comm;
    private Consumer<GradientSyncBuilder> gradientSettings = settings -> { };

    private DataParallel(final Communicator comm)
    {
        this.comm = Objects.requireNonNull(comm, "comm");
    }

    /**
     * Data parallelism over the ranks of {@code comm}.
     *
     * @param comm the communicator of the data-parallel ranks, open; it stays the caller's.
     * @return the settings, with the defaults of {@link dev.hccl.training.GradientSync}: 25 MiB buckets, averaged,
     *         uncompressed.
     */
    public static DataParallel over(final Communicator comm)
    {
        return new DataParallel(comm);
    }

    /**
     * How the gradients travel: bucket sizes, compression, autotune, as {@link GradientSyncBuilder} takes them.
     * The trainer turns averaging on first, which suits a loss that is a mean over the batch, as DJL's are; settings
     * may turn it off for a loss summed over the global batch.
     *
     * @param settings applied to the builder of each trainer's {@link dev.hccl.training.GradientSync}, on every rank
     *                 alike, after the trainer's.
     * @return these settings.
     */
    public DataParallel gradientSync(final Consumer<GradientSyncBuilder> settings)
    {
        this.gradientSettings = Objects.requireNonNull(settings, "settings");
        return this;
    }

    /**
     * A trainer of {@code model} whose steps apply the mean of every rank's gradients: use it where
     * {@code model.newTrainer(config)} was. Its loss and evaluators report the mean over the ranks at each epoch's
     * end.
     *
     * @param model  the model, with its block set; the same on every rank.
     * @param config its training configuration, with one device.
     * @return the trainer; call {@link DataParallelTrainer#initialize} on every rank before the first step.
     * @throws IllegalArgumentException when the configuration names several devices.
     */
    public DataParallelTrainer newTrainer(final Model model, final TrainingConfig config)
    {
        return new DataParallelTrainer(comm, model, config, gradientSettings);
    }

    /**
     * A sampler giving this rank its shard of a dataset, reshuffled each epoch alike on every rank
     * ({@link DistributedSampler}).
     *
     * @param batchSize this rank's batch: the global batch is {@code batchSize} x the world size.
     * @param seed      the shuffle's seed, the same on every rank.
     * @return the sampler, to pass to {@code setSampling(Sampler)} of a dataset's builder.
     */
    public DistributedSampler sampler(final int batchSize, final long seed)
    {
        return new DistributedSampler(batchSize, true, seed, comm.rank(), comm.worldSize());
    }

    /**
     * The communicator the trainers use.
     *
     * @return it.
     */
    public Communicator communicator()
    {
        return comm;
    }
}
