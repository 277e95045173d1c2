package dev.hccl.spark.djl;

import dev.hccl.api.CommConfig;
import dev.hccl.spark.LocalSpark;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The distributor in Spark's local mode, where every task is a thread of this JVM: one process trains on the whole
 * DataFrame and its result reaches the driver; several processes fail on every rank, before any training, saying that
 * DJL needs a JVM a rank. Training on several executors is {@code SparkStandaloneClusterTest}'s.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DjlDistributorLocalTest
{
    /** The functions that started: tasks are threads of this JVM. */
    private static final AtomicInteger STARTED = new AtomicInteger();

    private static SparkSession spark;
    private static Dataset<Row> numbers;

    @BeforeAll
    static void startSpark()
    {
        spark = LocalSpark.session();
        numbers = spark.createDataset(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L), Encoders.LONG()).toDF("x")
            .repartition(3);
    }

    @Test
    void oneProcessGetsEveryRowAndItsResultReachesTheDriver()
    {
        final String result = DjlDistributor.withProcesses(1).setting("HCCL_EXEC_TIMEOUT", "77").run(numbers, task ->
        {
            float sum = 0;
            for (final float x : RowArrays.floats(task.rows(), "x", 1, task.rank()))
            {
                sum += x;
            }
            return "rank " + task.rank() + " of " + task.worldSize() + " attempt " + task.attempt() + " rows " +
                task.partitionRows() + "/" + task.rows().size() + " sum " + sum + " timeout " +
                task.communicator().setting(CommConfig.EXEC_TIMEOUT).getSeconds();
        });
        assertEquals("rank 0 of 1 attempt 0 rows 8/8 sum 36.0 timeout 77", result);
        final String none = DjlDistributor.withProcesses(1).run(spark, task -> task.rows().size() + " rows");
        assertEquals("0 rows", none);
    }

    @Test
    void ranksThatShareAJvmFailOnEveryRankBeforeTraining()
    {
        STARTED.set(0);
        final Exception e = assertThrows(Exception.class, () -> DjlDistributor.withProcesses(2).run(numbers, task ->
        {
            STARTED.incrementAndGet();
            return "trained";
        }));
        assertTrue(e.getMessage().contains("tasks 0 and 1 of the training stage run in one JVM (executor driver)"),
            e.getMessage());
        assertEquals(0, STARTED.get(), "a function ran");
    }

    @Test
    void fewerThanOneProcessIsRefused()
    {
        assertEquals("DjlDistributor: 0 processes; give at least 1", assertThrows(IllegalArgumentException.class,
            () -> DjlDistributor.withProcesses(0)).getMessage());
    }
}
