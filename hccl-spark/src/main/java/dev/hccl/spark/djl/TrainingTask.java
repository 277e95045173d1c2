package dev.hccl.spark.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import dev.hccl.api.Communicator;
import dev.hccl.djl.DataParallel;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.sql.Row;

import java.util.Collections;
import java.util.List;

/**
 * One rank of a {@link DjlDistributor} run, as its {@link TrainingFunction} sees it: the communicator of the stage's
 * tasks, and this task's shard, which is its partition of the DataFrame padded to the largest partition's rows (its
 * own rows repeated), so that every rank has as many batches an epoch.
 */
public final class TrainingTask
{
    private final BarrierTaskContext context;
    private final Communicator comm;
    private final DataParallel dataParallel;
    private final List<Row> shard;
    private final int partitionRows;

    TrainingTask(final BarrierTaskContext context, final Communicator comm, final List<Row> shard,
        final int partitionRows)
    {
        this.context = context;
        this.comm = comm;
        this.dataParallel = DataParallel.over(comm);
        this.shard = Collections.unmodifiableList(shard);
        this.partitionRows = partitionRows;
    }

    /**
     * The communicator of the stage's tasks; the distributor closes it when the function returns.
     *
     * @return it: rank = partition, world size = the processes.
     */
    public Communicator communicator()
    {
        return comm;
    }

    /**
     * Data parallelism over the communicator, for {@code newTrainer(model, config)}.
     *
     * @return it, with {@link DataParallel}'s defaults until the function changes them.
     */
    public DataParallel dataParallel()
    {
        return dataParallel;
    }

    /**
     * This task's rank.
     *
     * @return its partition's index.
     */
    public int rank()
    {
        return comm.rank();
    }

    /**
     * The ranks: the distributor's processes.
     *
     * @return their count.
     */
    public int worldSize()
    {
        return comm.worldSize();
    }

    /**
     * Which attempt of the stage this is: 0 at first, more when Spark retries it after a failure (an executor lost,
     * a task that threw), when a function that checkpoints resumes.
     *
     * @return the stage's attempt number.
     */
    public int attempt()
    {
        return context.stageAttemptNumber();
    }

    /**
     * Spark's context of this task.
     *
     * @return it.
     */
    public BarrierTaskContext context()
    {
        return context;
    }

    /**
     * This rank's shard: its partition's rows, padded as the class says. It is in memory, whole.
     *
     * @return the rows, unmodifiable; none when the distributor runs without a DataFrame.
     */
    public List<Row> rows()
    {
        return shard;
    }

    /**
     * The rows of this task's partition, before padding: what an honest count of the data trained on adds up.
     *
     * @return the count.
     */
    public int partitionRows()
    {
        return partitionRows;
    }

    /**
     * A column of the shard as one float32 array, a row along its first axis: the data or labels of a DJL
     * {@code ArrayDataset}. A column's values are numbers, arrays of numbers or binary (a float a byte, 0 to 255).
     * <pre>{@code
     * NDArray x = task.floats(manager, "pixels", new Shape(1, 28, 28));   // [rows, 1, 28, 28]
     * NDArray y = task.floats(manager, "label", new Shape());             // [rows]
     * }</pre>
     *
     * @param manager  the manager that owns the array.
     * @param column   the column's name.
     * @param rowShape the shape of one row's values: {@code new Shape()} for a number.
     * @return the array, of shape {@code [rows] + rowShape}.
     * @throws IllegalArgumentException naming the rank, column and row, when the column is missing or a value is
     *                                  null, not numeric, or not of {@code rowShape}'s size.
     */
    public NDArray floats(final NDManager manager, final String column, final Shape rowShape)
    {
        final long perRow = rowShape.size();
        if (perRow > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("DjlDistributor rank " + rank() + ", column \"" + column + "\": a row " +
                "of shape " + rowShape + " is larger than a Java array");
        }
        final float[] values = RowArrays.floats(shard, column, (int)perRow, rank());
        return manager.create(values, new Shape(shard.size()).addAll(rowShape));
    }
}
