package dev.hccl.spark.examples;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.evaluator.Accuracy;
import ai.djl.training.listener.EvaluatorTrainingListener;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;
import dev.hccl.djl.Checkpoints;
import dev.hccl.spark.djl.DjlDistributor;
import dev.hccl.spark.djl.TrainingFunction;
import dev.hccl.spark.djl.TrainingTask;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

import java.io.Serializable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.zip.CRC32;

/**
 * DJL training over a Spark DataFrame with {@link DjlDistributor}: a small MLP learns which of four Gaussian blobs a
 * point of eight features comes from, each rank an executor training on its partition, the gradients averaged across
 * the ranks every step. With a checkpoint directory that every executor reaches, rank 0 saves the model after each
 * epoch and a retried stage (an executor lost) resumes from the newest.
 * <p>
 * {@code spark-submit --class dev.hccl.spark.examples.SparkDjlTraining --jars hccl-shaded.jar,DJL's jars
 * hccl-spark.jar [PROCESSES] [EPOCHS] [CHECKPOINT_DIR]}: see docs/DEPLOY.md. It prints the accuracy (the mean over
 * the ranks) and each rank's rows and parameters' checksum, and exits 0 when every rank ends with the same parameters
 * and the accuracy reaches {@link #TARGET_ACCURACY}.
 */
public final class SparkDjlTraining
{
    /** Rows of the generated DataFrame. */
    public static final int ROWS = 4_000;
    /** The training accuracy the example must reach. */
    public static final double TARGET_ACCURACY = 0.9;
    private static final int FEATURES = 8;
    private static final int CLASSES = 4;
    private static final int BATCH = 32;

    /**
     * What a run gives the driver, from rank 0.
     *
     * @param attempt       the stage attempt that finished.
     * @param resumedAfter  the epochs the checkpoint held when it started: 0 without one.
     * @param accuracy      the last epoch's training accuracy, the mean over the ranks.
     * @param ranks         per rank: its partition's rows, its shard's rows, its engine threads and the checksum of
     *                      its parameters, as {@code 1000/1000 threads 1 crc 5e0c1a2b}.
     */
    public record Outcome(int attempt, int resumedAfter, float accuracy, List<String> ranks) implements Serializable
    {
    }

    /** Called on each rank after each epoch's checkpoint; lets a test stop a rank at a known point. */
    @FunctionalInterface
    public interface AfterEpoch extends Serializable
    {
        /**
         * @param task       the rank.
         * @param epochsDone the epochs trained so far.
         * @throws Exception to fail the rank.
         */
        void after(TrainingTask task, int epochsDone) throws Exception;
    }

    private SparkDjlTraining()
    {
    }

    public static void main(final String[] args)
    {
        final SparkSession spark = SparkSession.builder().appName("hccl-spark DJL training").getOrCreate();
        final int status;
        try
        {
            final int processes = args.length > 0 ? Integer.parseInt(args[0]) :
                spark.sparkContext().defaultParallelism();
            final int epochs = args.length > 1 ? Integer.parseInt(args[1]) : 4;
            final String checkpoints = args.length > 2 ? args[2] : null;
            final Outcome out = DjlDistributor.withProcesses(processes)
                .run(blobs(spark), training(epochs, checkpoints, (task, done) -> { }));
            final boolean same = out.ranks().stream().map(r -> r.replaceAll(".* crc ", "")).distinct().count() == 1;
            System.out.printf(Locale.ROOT, "%d ranks, %d epochs%s: accuracy %.2f%%; ranks (rows/shard, engine " +
                "threads, parameters' crc): %s%n", processes, epochs, out.resumedAfter() > 0 ? ", resumed after " +
                "epoch " + out.resumedAfter() : "", 100 * out.accuracy(), String.join("; ", out.ranks()));
            status = same && out.accuracy() >= TARGET_ACCURACY ? 0 : 1;
        }
        finally
        {
            spark.stop();
        }
        System.exit(status);
    }

    /**
     * Four classes, each a Gaussian blob around a corner of its own, in eight features: the same every run.
     *
     * @param spark the session.
     * @return {@link #ROWS} rows of {@code features} (array of floats) and {@code label} (0 to 3).
     */
    public static Dataset<Row> blobs(final SparkSession spark)
    {
        final Random random = new Random(7);
        final List<Row> rows = new ArrayList<>();
        for (int i = 0; i < ROWS; i++)
        {
            final int label = random.nextInt(CLASSES);
            final float[] x = new float[FEATURES];
            for (int f = 0; f < FEATURES; f++)
            {
                x[f] = (float)(random.nextGaussian() * 0.5 + (f % CLASSES == label ? 2 : 0));
            }
            rows.add(RowFactory.create(x, label));
        }
        final StructType schema = new StructType()
            .add("features", DataTypes.createArrayType(DataTypes.FloatType, false))
            .add("label", DataTypes.IntegerType);
        return spark.createDataFrame(rows, schema);
    }

    /**
     * What each rank does: train the MLP on its shard, checkpointing when given a directory.
     *
     * @param epochs      the epochs, in all.
     * @param checkpoints the directory of rank 0's checkpoints, reached by every executor; null for none.
     * @param afterEpoch  called after each epoch's checkpoint.
     * @return the function, for {@link DjlDistributor#run(Dataset, TrainingFunction)}.
     */
    public static TrainingFunction<Outcome> training(final int epochs, final String checkpoints,
        final AfterEpoch afterEpoch)
    {
        return task ->
        {
            try (Model model = Model.newInstance("blobs-mlp", Device.cpu()))
            {
                model.setBlock(new SequentialBlock()
                    .add(Linear.builder().setUnits(32).build())
                    .add(Activation::relu)
                    .add(Linear.builder().setUnits(CLASSES).build()));
                final NDManager manager = model.getNDManager();
                final ArrayDataset shard = new ArrayDataset.Builder()
                    .setData(task.floats(manager, "features", new Shape(FEATURES)))
                    .optLabels(task.floats(manager, "label", new Shape()))
                    .setSampling(BATCH, true) // this rank's partition, reshuffled each epoch
                    .build();
                final DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).build())
                    .optDevices(new Device[] {Device.cpu()})
                    .addEvaluator(new Accuracy())
                    .addTrainingListeners(new EvaluatorTrainingListener()); // the epoch's accuracy, in the result
                final Checkpoints saved = checkpoints == null ? null :
                    new Checkpoints(task.communicator(), Path.of(checkpoints), "blobs-mlp");
                final int done = saved == null ? 0 : saved.resume(model); // before initialize, which hands it out
                final float accuracy;
                try (Trainer trainer = task.dataParallel().newTrainer(model, config))
                {
                    trainer.initialize(new Shape(BATCH, FEATURES)); // rank 0's parameters on every rank
                    for (int epoch = done; epoch < epochs; epoch++)
                    {
                        EasyTrain.fit(trainer, 1, shard, null);
                        if (saved != null)
                        {
                            saved.save(model, epoch + 1);
                        }
                        afterEpoch.after(task, epoch + 1);
                    }
                    final Float trained = trainer.getTrainingResult().getTrainEvaluation("Accuracy");
                    accuracy = trained == null ? Float.NaN : trained; // none when the checkpoint held every epoch
                }
                final String[] ranks = task.context().allGather(task.partitionRows() + "/" + task.rows().size() +
                    " threads " + engineThreads() + " crc " +
                    checksum(model));
                return new Outcome(task.attempt(), done, accuracy, List.of(ranks));
            }
        };
    }

    /** The threads the PyTorch engine was told to use: DJL's property, else OpenMP's variable. */
    private static String engineThreads()
    {
        final String property = System.getProperty("ai.djl.pytorch.num_threads");
        final String omp = System.getenv("OMP_NUM_THREADS");
        return property != null ? property : omp != null ? omp : "default";
    }

    /** A checksum of the model's parameters, in their order. */
    private static String checksum(final Model model)
    {
        final CRC32 crc = new CRC32();
        for (final Pair<String, Parameter> p : model.getBlock().getParameters())
        {
            crc.update(p.getValue().getArray().toByteArray());
        }
        return Long.toHexString(crc.getValue());
    }
}
