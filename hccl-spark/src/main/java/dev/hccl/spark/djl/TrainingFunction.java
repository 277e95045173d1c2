package dev.hccl.spark.djl;

import java.io.Serializable;

/**
 * What every rank of a {@link DjlDistributor} run does: build the model, train it with
 * {@code task.dataParallel().newTrainer(model, config)} on {@code task}'s shard, and return what the driver should get.
 * It is serialized to the executors, so it captures only serializable values (not the SparkSession).
 *
 * @param <R> the result; rank 0's is the run's, so it must be serializable.
 */
@FunctionalInterface
public interface TrainingFunction<R> extends Serializable
{
    /**
     * Trains on one rank.
     *
     * @param task the rank: its communicator and shard.
     * @return the result: rank 0's goes to the driver, the others' are dropped.
     * @throws Exception to fail the task, and so the stage, which Spark then retries.
     */
    R train(TrainingTask task) throws Exception;
}
