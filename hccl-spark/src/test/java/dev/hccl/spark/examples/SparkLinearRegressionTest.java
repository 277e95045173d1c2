package dev.hccl.spark.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The example trains over a Dataset's partitions and ends where one process training on every row ends. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SparkLinearRegressionTest
{
    @Test
    void fourRanksEqualOneProcess()
    {
        final double difference = SparkLinearRegression.run(dev.hccl.spark.LocalSpark.session(), 4, 40);
        assertTrue(difference <= SparkLinearRegression.TOLERANCE, "relative difference " + difference);
    }

    @Test
    void theModelLearnsTheData()
    {
        final var spark = dev.hccl.spark.LocalSpark.session();
        final var data = SparkLinearRegression.dataset(spark, 2048, 4, 7).repartition(4);
        final var early = SparkLinearRegression.train(data, 2);
        final var late = SparkLinearRegression.train(data, 60);
        // Noise of 0.1: a fitted model's mean squared error approaches 0.01; the first steps' is far above.
        assertTrue(late.loss() < 0.05 && early.loss() > 10 * late.loss(),
            "loss after 2 steps " + early.loss() + ", after 60 " + late.loss());
    }
}
