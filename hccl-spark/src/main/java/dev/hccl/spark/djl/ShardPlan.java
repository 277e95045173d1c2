package dev.hccl.spark.djl;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the tasks of a training stage agree on before they train, from one message a task, gathered in partition order
 * through Spark ({@code BarrierTaskContext.allGather}): its partition's row count and the JVM it runs in. Every task
 * computes the same plan from the same messages, so that a problem fails every rank alike, each naming it.
 * <p>
 * The plan's shards are equal: each partition's rows, padded to the largest partition's count by repeating its own rows
 * from the first, as PyTorch's {@code DistributedSampler} pads. Equal shards give every rank the same number of
 * batches an epoch, so that no rank waits in a step the others never take.
 */
final class ShardPlan
{
    private final int[] rows;
    private final int padded;

    private ShardPlan(final int[] rows)
    {
        this.rows = rows;
        this.padded = Arrays.stream(rows).max().orElse(0);
    }

    /**
     * This task's message.
     *
     * @param rows the rows of its partition.
     * @param jvm  the JVM it runs in: Spark's executor id.
     * @return the message.
     */
    static String message(final int rows, final String jvm)
    {
        return rows + " " + jvm;
    }

    /**
     * The plan of a stage.
     *
     * @param rank      this task's rank, for the errors.
     * @param messages  every task's {@link #message}, in partition order.
     * @param needsRows whether the stage trains on a DataFrame, whose every partition must have a row.
     * @return the plan.
     * @throws HcclException {@code E_PARA}, on every rank alike: when two tasks run in one JVM, or a partition has
     *                       no rows.
     */
    static ShardPlan agree(final int rank, final String[] messages, final boolean needsRows)
    {
        final int[] rows = new int[messages.length];
        final Map<String, Integer> firstInJvm = new HashMap<>();
        for (int task = 0; task < messages.length; task++)
        {
            final int space = messages[task].indexOf(' ');
            rows[task] = Integer.parseInt(messages[task].substring(0, space));
            final String jvm = messages[task].substring(space + 1);
            final Integer other = firstInJvm.putIfAbsent(jvm, task);
            if (other != null)
            {
                throw new HcclException(ErrorCode.E_PARA, rank, task == rank ? other : task, Operation.INIT,
                    HcclException.NO_SEQUENCE, "DjlDistributor: tasks " + other + " and " + task + " of the " +
                    "training stage run in one JVM (executor " + jvm + "), and DJL trains one model a JVM (its " +
                    "PyTorch engine records one step's gradients at a time in a process): give each executor one " +
                    "task slot, spark.executor.cores equal to spark.task.cpus; in local mode every task runs in the " +
                    "driver's JVM, so train on a cluster (standalone, YARN, Kubernetes or local-cluster)", null);
            }
        }
        if (needsRows)
        {
            for (int task = 0; task < rows.length; task++)
            {
                if (rows[task] == 0)
                {
                    throw new HcclException(ErrorCode.E_PARA, rank, task == rank ? HcclException.UNKNOWN_RANK : task,
                        Operation.INIT, HcclException.NO_SEQUENCE, "DjlDistributor: partition " + task + " of the " +
                        "DataFrame has no rows to train on (rows per partition: " + Arrays.toString(rows) + "): " +
                        "give at least one row a process, or fewer processes", null);
                }
            }
        }
        return new ShardPlan(rows);
    }

    /**
     * The rows of a task's partition, before padding.
     *
     * @param task the task's rank.
     * @return its count.
     */
    int rows(final int task)
    {
        return rows[task];
    }

    /**
     * The rows of every shard: the largest partition's count.
     *
     * @return the count.
     */
    int paddedRows()
    {
        return padded;
    }

    /**
     * A partition's rows padded to {@link #paddedRows()}, its own rows repeated from the first.
     *
     * @param partition the partition's rows; this plan's count for it.
     * @param <T>       the rows' type.
     * @return the shard: {@code partition} itself when it needs no padding.
     */
    <T> List<T> pad(final List<T> partition)
    {
        if (partition.size() == padded || partition.isEmpty())
        {
            return partition;
        }
        final List<T> shard = new ArrayList<>(padded);
        shard.addAll(partition);
        for (int i = 0; shard.size() < padded; i++)
        {
            shard.add(partition.get(i % partition.size()));
        }
        return shard;
    }
}
