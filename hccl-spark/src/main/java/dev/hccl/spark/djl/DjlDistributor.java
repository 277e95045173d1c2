package dev.hccl.spark.djl;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.spark.SparkHccl;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Data-parallel DJL training inside a Spark application, as PySpark's {@code TorchDistributor} runs PyTorch's: the
 * function runs on {@code processes} tasks of one barrier stage, each a rank of one communicator with its partition of
 * the DataFrame as its shard, and the driver gets rank 0's result.
 * <pre>{@code
 * byte[] trained = DjlDistributor.withProcesses(4).run(df, task -> {
 *     try (Model model = Model.newInstance("mlp")) {
 *         model.setBlock(block);
 *         NDManager m = model.getNDManager();
 *         ArrayDataset shard = new ArrayDataset.Builder()
 *             .setData(task.floats(m, "features", new Shape(8)))
 *             .optLabels(task.floats(m, "label", new Shape()))
 *             .setSampling(32, true).build();                        // this rank's partition, shuffled
 *         try (Trainer trainer = task.dataParallel().newTrainer(model, config)) {
 *             trainer.initialize(new Shape(32, 8));                   // rank 0's parameters on every rank
 *             EasyTrain.fit(trainer, 5, shard, null);                 // gradients averaged across the ranks
 *         }
 *         return parameters(model);                                  // rank 0's is the run's result
 *     }
 * });
 * }</pre>
 * How it runs:
 * <ul>
 *   <li>The DataFrame is repartitioned into {@code processes} partitions; each is held in memory by its task and
 *       padded to the largest partition's rows by repeating its own rows, so that every rank has as many batches an
 *       epoch ({@link TrainingTask#rows()}). A partition without rows fails the run on every rank.</li>
 *   <li>The stage is a barrier stage ({@link SparkHccl}): its tasks start together, a failed or killed task aborts
 *       the communicator of all, and Spark retries the whole stage ({@code spark.stage.maxConsecutiveAttempts}
 *       times). A retry starts the function anew on every rank; one that saves
 *       {@link dev.hccl.djl.Checkpoints} in a directory every executor reaches resumes from them
 *       ({@link TrainingTask#attempt()}).</li>
 *   <li>Each task must run in an executor of its own, as DJL trains one model a JVM: executors of one task slot
 *       ({@code spark.executor.cores} equal to {@code spark.task.cpus}), and the cluster needs {@code processes} free
 *       slots. Tasks that share a JVM (local mode) fail on every rank, saying so.</li>
 *   <li>The executor's PyTorch engine must not take a thread per core of the machine: several executors doing so
 *       train many times slower. Spark gives executors {@code OMP_NUM_THREADS} (their cores) unless the application
 *       sets it; where neither it nor {@code ai.djl.pytorch.num_threads} is set, the distributor sets the latter to
 *       {@code spark.task.cpus}, as torchrun gives each process one thread. It takes effect where the engine has not
 *       started yet in the executor.</li>
 * </ul>
 * Executors need DJL and its engine on their class path beside hccl-spark ({@code --jars} or
 * {@code --packages}), and hccl-java's JVM flags ({@code SparkHccl}).
 */
public final class DjlDistributor implements Serializable
{
    private static final long serialVersionUID = 1L;
    private static final String ENGINE_THREADS = "ai.djl.pytorch.num_threads";

    private final int processes;
    private final TreeMap<String, String> settings;

    private DjlDistributor(final int processes, final TreeMap<String, String> settings)
    {
        this.processes = processes;
        this.settings = settings;
    }

    /**
     * A distributor over {@code processes} ranks, with the communicator settings of the executors' environment.
     *
     * @param processes the ranks: tasks of the stage, executors of the cluster.
     * @return the distributor.
     * @throws IllegalArgumentException when {@code processes} is below 1.
     */
    public static DjlDistributor withProcesses(final int processes)
    {
        if (processes < 1)
        {
            throw new IllegalArgumentException("DjlDistributor: " + processes + " processes; give at least 1");
        }
        return new DjlDistributor(processes, new TreeMap<>());
    }

    /**
     * A communicator setting for every rank, by its variable's name, over what the executor's environment says:
     * {@code setting("HCCL_EXEC_TIMEOUT", "120")}.
     *
     * @param variable the variable, as docs/guide/configuration.md names it.
     * @param value    its value.
     * @return a distributor with the setting.
     */
    public DjlDistributor setting(final String variable, final String value)
    {
        final TreeMap<String, String> more = new TreeMap<>(settings);
        more.put(Objects.requireNonNull(variable, "variable"), Objects.requireNonNull(value, "value"));
        return new DjlDistributor(processes, more);
    }

    /**
     * Trains over the rows of {@code data}: each rank gets one partition of it, repartitioned into
     * {@code processes}. When the stage still fails after Spark's retries, this throws Spark's
     * {@code SparkException}, which carries the last failure of each task.
     *
     * @param data     the training data.
     * @param function what every rank does.
     * @param <R>      the result.
     * @return rank 0's result.
     */
    public <R> R run(final Dataset<Row> data, final TrainingFunction<R> function)
    {
        return runStage(data.repartition(processes).javaRDD(), true, function);
    }

    /**
     * Runs {@code function} on {@code processes} ranks without data: a function that reads its own.
     *
     * @param spark    the session.
     * @param function what every rank does.
     * @param <R>      the result.
     * @return rank 0's result.
     */
    public <R> R run(final SparkSession spark, final TrainingFunction<R> function)
    {
        final JavaRDD<Row> none = JavaSparkContext.fromSparkContext(spark.sparkContext())
            .parallelize(Collections.emptyList(), processes);
        return runStage(none, false, function);
    }

    private <R> R runStage(final JavaRDD<Row> partitions, final boolean needsRows, final TrainingFunction<R> function)
    {
        Objects.requireNonNull(function, "function");
        // A shuffle after the stage makes it a map stage, which Spark retries whole; it aborts a failed barrier result
        // stage at once.
        final List<Result<R>> results = SparkHccl.mapPartitions(partitions,
            (BarrierTaskContext ctx, Iterator<Row> partition) -> train(ctx, partition, needsRows, function))
            .repartition(1).collect();
        if (results.size() != 1)
        {
            throw new IllegalStateException("DjlDistributor: " + results.size() + " results came back where rank 0 " +
                "gives one");
        }
        return results.get(0).value;
    }

    private <R> Iterator<Result<R>> train(final BarrierTaskContext ctx, final Iterator<Row> partition,
        final boolean needsRows, final TrainingFunction<R> function) throws Exception
    {
        final List<Row> rows = new ArrayList<>();
        partition.forEachRemaining(rows::add);
        final String jvm = SparkEnv.get().executorId();
        final ShardPlan plan = ShardPlan.agree(ctx.partitionId(),
            ctx.allGather(ShardPlan.message(rows.size(), jvm)), needsRows);
        if (System.getProperty(ENGINE_THREADS) == null && System.getenv("OMP_NUM_THREADS") == null)
        {
            System.setProperty(ENGINE_THREADS, Integer.toString(Math.max(1, ctx.cpus())));
        }
        try (Communicator comm = SparkHccl.init(ctx, config()))
        {
            final R value = function.train(new TrainingTask(ctx, comm, plan.pad(rows), rows.size()));
            return comm.rank() == 0 ? List.of(new Result<>(value)).iterator() : Collections.emptyIterator();
        }
    }

    /** The executor's environment, with this distributor's settings over it. */
    private CommConfig config()
    {
        final Map<String, String> env = new HashMap<>(System.getenv());
        env.putAll(settings);
        return CommConfig.builder().environment(env).conclude();
    }

    /** Rank 0's result on its way to the driver: a value that may be null. */
    private static final class Result<R> implements Serializable
    {
        private static final long serialVersionUID = 1L;
        private final R value;

        Result(final R value)
        {
            this.value = value;
        }
    }
}
