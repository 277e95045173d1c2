package dev.hccl.spark;

import dev.hccl.spark.djl.DjlDistributor;
import dev.hccl.spark.examples.SparkDjlTraining;
import org.apache.spark.sql.SparkSession;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The DJL stage of {@link StandaloneDriver}: the {@link SparkDjlTraining} example on four ranks, each an executor
 * with its partition, rank 0 checkpointing each epoch in a directory both nodes share. In the first attempt rank 1
 * writes its executor's process id after the second epoch's checkpoint and stalls, so that the others wait for it
 * inside a step until the driver kills its executor; Spark retries the stage and the ranks resume from the checkpoint.
 */
final class DjlTrainingStage
{
    static final int EPOCHS = 4;
    static final int KILLED_AFTER = 2;

    private DjlTrainingStage()
    {
    }

    /**
     * Runs the stage.
     *
     * @param spark       the session.
     * @param checkpoints the directory for rank 0's checkpoints.
     * @param pidFile     where rank 1 writes its process id to be killed.
     * @return {@code attempt A resumed E accuracy X ranks R, R, R, R}, each R as {@link SparkDjlTraining.Outcome}
     *         gives it.
     */
    static String run(final SparkSession spark, final Path checkpoints, final Path pidFile)
    {
        final String victim = pidFile.toString();
        final SparkDjlTraining.Outcome out = DjlDistributor.withProcesses(StandaloneDriver.RANKS)
            .setting("HCCL_EXEC_TIMEOUT", "600").setting("HCCL_CONNECT_TIMEOUT", "60")
            .run(SparkDjlTraining.blobs(spark), SparkDjlTraining.training(EPOCHS, checkpoints.toString(),
                (task, done) ->
                {
                    if (task.attempt() == 0 && task.rank() == 1 && done == KILLED_AFTER)
                    {
                        final Path next = Path.of(victim + ".next");
                        Files.writeString(next, Long.toString(ProcessHandle.current().pid()));
                        Files.move(next, Path.of(victim));
                        Thread.sleep(180_000); // the others wait in the next step until the kill
                    }
                }));
        return String.format(Locale.ROOT, "attempt %d resumed %d accuracy %.4f ranks %s", out.attempt(),
            out.resumedAfter(), out.accuracy(), String.join(", ", out.ranks()));
    }
}
