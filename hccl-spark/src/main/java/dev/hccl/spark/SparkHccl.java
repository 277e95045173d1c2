package dev.hccl.spark;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.Setting;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.BarrierTaskInfo;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

import java.util.Map;
import java.util.Objects;

/**
 * Communicators inside Spark's barrier execution mode: one rank a task of a barrier stage, as XGBoost4J-Spark and
 * SynapseML's LightGBM start their all-reduce workers.
 * <pre>{@code
 * JavaRDD<double[]> out = SparkHccl.mapPartitions(rows, (ctx, partition) -> {
 *     try (Communicator comm = SparkHccl.init(ctx)) {      // rank = partition id, world = the stage's tasks
 *         ...
 *     }
 * });
 * }</pre>
 * The stage's tasks agree on everything through Spark itself: rank 0's address is its executor's in
 * {@link BarrierTaskContext#getTaskInfos()}; rank 0 starts the rendezvous store on an ephemeral port of it and hands
 * the port and a fresh job token to the other tasks with {@link BarrierTaskContext#allGather(String)}. So every stage
 * attempt, a retry included, gets a communicator of its own, and no rank from another attempt or another job can
 * join it. The token travels over Spark's RPC: turn on {@code spark.authenticate} and
 * {@code spark.network.crypto.enabled} where the network is shared.
 * <p>
 * The communicator lives and dies with its task: when the task fails or Spark kills it (another task of the stage
 * failed, the job was cancelled), the communicator is aborted at once, which ends every wait on it here and on the
 * other ranks, so that the stage fails fast instead of waiting for {@code HCCL_EXEC_TIMEOUT}; when the task ends it
 * is closed, if the task has not closed it.
 * <p>
 * Executors need {@code --add-opens java.base/jdk.internal.misc=ALL-UNNAMED} in
 * {@code spark.executor.extraJavaOptions} (and the driver too, in local mode), as every hccl-java process does.
 */
public final class SparkHccl
{
    private SparkHccl()
    {
    }

    /**
     * Creates this task's communicator, with the settings of the environment ({@code HCCL_*}, set for executors with
     * {@code spark.executorEnv.*}). A collective call of every task of the barrier stage.
     *
     * @param ctx this task's context, {@code BarrierTaskContext.get()}.
     * @return the communicator: rank = partition id, world size = the stage's tasks.
     * @throws HcclException when the ranks cannot set up (within {@code HCCL_CONNECT_TIMEOUT}).
     * @throws org.apache.spark.TaskKilledException when Spark kills the task while it waits for the others.
     */
    public static Communicator init(final BarrierTaskContext ctx)
    {
        return init(ctx, CommConfig.builder().conclude());
    }

    /**
     * As {@link #init(BarrierTaskContext)}, with explicit settings. Their rank, world size, rendezvous address and
     * root info are the stage's, whatever they say.
     *
     * @param ctx    this task's context, {@code BarrierTaskContext.get()}.
     * @param config the other settings: timeouts, algorithms, interfaces, TLS, a job token to use instead of a fresh
     *               one.
     * @return the communicator.
     * @throws HcclException when the ranks cannot set up (within {@code HCCL_CONNECT_TIMEOUT}).
     * @throws org.apache.spark.TaskKilledException when Spark kills the task while it waits for the others.
     */
    public static Communicator init(final BarrierTaskContext ctx, final CommConfig config)
    {
        Objects.requireNonNull(ctx, "ctx: call SparkHccl.init(BarrierTaskContext.get()) inside a barrier stage");
        Objects.requireNonNull(config, "config");
        final BarrierTaskInfo[] tasks = ctx.getTaskInfos();
        final int rank = ctx.partitionId();
        final int worldSize = tasks.length;
        if (rank >= worldSize)
        {
            throw new HcclException(ErrorCode.E_PARA, rank, HcclException.UNKNOWN_RANK, Operation.INIT,
                HcclException.NO_SEQUENCE, "partition " + rank + " of a barrier stage of " + worldSize + " tasks", null);
        }
        String offered = "";
        if (rank == 0)
        {
            final Map<Setting<?>, Object> here = Map.of(CommConfig.MASTER_ADDR, hostOf(tasks[0].address()));
            offered = Hccl.getRootInfo(config.overriding(here));
        }
        final String rootInfo;
        try
        {
            // Every task's message, in partition order: rank 0's is the root info.
            rootInfo = ctx.allGather(offered)[0];
        }
        catch (final RuntimeException ex)
        {
            if (rank == 0)
            {
                Hccl.releaseRootInfo(offered); // the stage was given up: nobody will come to the store
            }
            throw ex;
        }
        // The local rank is derived from node identity, whatever the executor's environment says (srun's, say).
        final Map<Setting<?>, Object> placement = Map.of(CommConfig.RANK, rank, CommConfig.WORLD_SIZE, worldSize,
            CommConfig.ROOT_INFO, rootInfo, CommConfig.LOCAL_RANK, CommConfig.DERIVE, CommConfig.LOCAL_WORLD_SIZE,
            CommConfig.DERIVE);
        return TaskBinding.init(ctx, config.overriding(placement));
    }

    /**
     * Runs {@code stage} on every partition of {@code rdd} as one barrier stage (all tasks at once, retried
     * together): Spark's {@code rdd.barrier().mapPartitions}, for Java. The stage has as many tasks as {@code rdd}
     * has partitions, and the cluster must have as many free task slots.
     *
     * @param rdd   the data, one rank a partition.
     * @param stage what each task does with its partition, typically in a communicator of {@link #init}.
     * @param <T>   the element type of {@code rdd}.
     * @param <R>   the element type of the result.
     * @return the elements that the tasks return, partition by partition (lazily: an action runs the stage).
     */
    public static <T, R> JavaRDD<R> mapPartitions(final JavaRDD<T> rdd, final BarrierFunction<T, R> stage)
    {
        final ClassTag<R> tag = anyRef();
        final RDD<R> out = rdd.rdd().barrier().mapPartitions(new BarrierFunction.Adapter<>(stage), false, tag);
        return new JavaRDD<>(out, tag);
    }

    @SuppressWarnings("unchecked")
    private static <R> ClassTag<R> anyRef()
    {
        return (ClassTag<R>)(ClassTag<?>)ClassTag$.MODULE$.AnyRef();
    }

    /**
     * The host of a barrier task's address, which Spark gives as {@code host:port} of the executor.
     *
     * @param address the address, {@code host:port}, {@code [v6]:port} or a bare host.
     * @return the host, without brackets.
     */
    static String hostOf(final String address)
    {
        if (address.startsWith("["))
        {
            final int close = address.indexOf(']');
            return close < 0 ? address : address.substring(1, close);
        }
        final int colon = address.lastIndexOf(':');
        // More than one colon and no brackets: a bare IPv6 address.
        if (colon < 0 || address.indexOf(':') != colon)
        {
            return address;
        }
        return address.substring(0, colon);
    }
}
