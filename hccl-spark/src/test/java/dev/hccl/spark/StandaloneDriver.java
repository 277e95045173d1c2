package dev.hccl.spark;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The driver of {@link SparkStandaloneClusterTest}: a Spark application against a standalone master (its URL in
 * {@code spark.master}), whose barrier stages of {@link #RANKS} tasks run in executors of one core each. It runs, in
 * order, every collective; a stage whose task throws once; a stage whose executor is killed (SIGKILL) inside a
 * collective; DJL training ({@link DjlTrainingStage}) whose executor is killed mid-training. It prints one
 * {@code RESULT name: ...} line per stage and exits 0, or exits 1 with the failure.
 * <p>
 * Arguments: a directory the executors and this driver share (this machine's), where the task to be killed writes its
 * process id.
 */
public final class StandaloneDriver
{
    static final int RANKS = 4;

    private StandaloneDriver()
    {
    }

    /**
     * @param args the shared directory.
     */
    public static void main(final String[] args) throws Exception
    {
        final Path dir = Path.of(args[0]);
        final SparkSession spark = SparkSession.builder().appName("hccl-spark standalone test").getOrCreate();
        try
        {
            final JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
            final List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < RANKS; i++)
            {
                ids.add(i);
            }
            final JavaRDD<Integer> partitions = sc.parallelize(ids, RANKS);
            System.out.println("RESULT collectives: " + collectives(partitions));
            long started = System.nanoTime();
            System.out.println("RESULT throws: " + throwsOnce(partitions) + " in " + seconds(started) + " s");
            final Path pidFile = dir.resolve("victim.pid");
            final long[] killedAt = {0};
            Thread killer = killer(pidFile, killedAt);
            final List<String> retried = killedInsideACollective(partitions, pidFile.toString());
            killer.join();
            System.out.println("RESULT killed: " + retried + " in " + seconds(killedAt[0]) + " s after the kill");
            final Path djlPidFile = dir.resolve("djl-victim.pid");
            killer = killer(djlPidFile, killedAt);
            final String trained = DjlTrainingStage.run(spark, dir.resolve("checkpoints"), djlPidFile);
            killer.join();
            System.out.println("RESULT djl: " + trained + " in " + seconds(killedAt[0]) + " s after the kill");
        }
        finally
        {
            spark.stop();
        }
    }

    /** Timeouts no stage should reach: one that waits for them has hung. */
    private static CommConfig config()
    {
        return CommConfig.builder().execTimeout(Duration.ofSeconds(600)).connectTimeout(Duration.ofSeconds(60))
            .conclude();
    }

    /**
     * Every rank's process, executor host, transports to the others and the results of six collectives.
     */
    private static List<String> collectives(final JavaRDD<Integer> partitions)
    {
        return SparkHccl.mapPartitions(partitions, (ctx, it) ->
        {
            try (Communicator comm = SparkHccl.init(ctx, config()))
            {
                final int n = comm.worldSize();
                final int r = comm.rank();
                final ByteBuffer sum = floats(1 << 16);
                for (int i = 0; i < 1 << 16; i++)
                {
                    sum.putFloat(4 * i, r + i % 7);
                }
                comm.allReduce(sum, sum, 1 << 16, DataType.FP32, ReduceOp.SUM);
                final ByteBuffer all = floats(n);
                final ByteBuffer mine = floats(1);
                mine.putFloat(0, 10 * r);
                comm.allGather(mine, all, 1, DataType.FP32);
                final ByteBuffer root = floats(1);
                root.putFloat(0, r == 3 ? 42 : -1);
                comm.broadcast(root, 1, DataType.FP32, 3);
                final ByteBuffer scatterIn = floats(n);
                for (int i = 0; i < n; i++)
                {
                    scatterIn.putFloat(4 * i, i + r);
                }
                final ByteBuffer scatterOut = floats(1);
                comm.reduceScatter(scatterIn, scatterOut, 1, DataType.FP32, ReduceOp.SUM);
                final ByteBuffer max = floats(1);
                max.putFloat(0, r * 3);
                comm.reduce(max, max, 1, DataType.FP32, ReduceOp.MAX, 0);
                final ByteBuffer toAll = floats(n);
                for (int i = 0; i < n; i++)
                {
                    toAll.putFloat(4 * i, 100 * r + i);
                }
                final ByteBuffer fromAll = floats(n);
                comm.allToAll(toAll, fromAll, 1, DataType.FP32);
                comm.barrier();
                final StringBuilder s = new StringBuilder().append("rank ").append(r).append(" pid ")
                    .append(ProcessHandle.current().pid()).append(" host ")
                    .append(ctx.getTaskInfos()[ctx.partitionId()].address().replaceAll(":\\d+$", ""))
                    .append(" transports");
                for (int p = 0; p < n; p++)
                {
                    s.append(p == 0 ? " " : ",").append(p == r ? "self" : comm.transportTo(p));
                }
                boolean sumRight = true;
                for (int i = 0; i < 1 << 16; i++)
                {
                    sumRight &= sum.getFloat(4 * i) == n * (n - 1) / 2f + n * (i % 7);
                }
                s.append(" allReduce ").append(sumRight ? "right" : "WRONG").append(" allGather");
                for (int p = 0; p < n; p++)
                {
                    s.append(p == 0 ? " " : ",").append((int)all.getFloat(4 * p));
                }
                s.append(" broadcast ").append((int)root.getFloat(0)).append(" reduceScatter ")
                    .append((int)scatterOut.getFloat(0)).append(" reduce ").append(r == 0 ? (int)max.getFloat(0) : -1)
                    .append(" allToAll");
                for (int p = 0; p < n; p++)
                {
                    s.append(p == 0 ? " " : ",").append((int)fromAll.getFloat(4 * p));
                }
                return List.of(s.toString()).iterator();
            }
        }).collect();
    }

    /** Rank 2 throws after an all-reduce in the first attempt; the retry's sums. */
    private static List<String> throwsOnce(final JavaRDD<Integer> partitions)
    {
        return SparkHccl.mapPartitions(partitions, (ctx, it) ->
        {
            final int attempt = ctx.stageAttemptNumber();
            try (Communicator comm = SparkHccl.init(ctx, config()))
            {
                final ByteBuffer b = floats(1);
                b.putFloat(0, comm.rank() + 1);
                comm.allReduce(b, b, 1, DataType.FP32, ReduceOp.SUM);
                if (attempt == 0 && comm.rank() == 2)
                {
                    throw new IllegalStateException("rank 2 fails on purpose");
                }
                comm.allReduce(b, b, 1, DataType.FP32, ReduceOp.SUM);
                return List.of(attempt + ":" + b.getFloat(0)).iterator();
            }
        }).repartition(1).collect(); // a shuffle after it: Spark retries a failed barrier stage only when it maps
    }

    /**
     * In the first attempt rank 1 writes its executor's process id and waits inside an all-reduce that rank 3 never
     * joins, until {@link #killWhenItWaits} kills its executor; the retry's sums.
     */
    private static List<String> killedInsideACollective(final JavaRDD<Integer> partitions, final String pidFile)
    {
        return SparkHccl.mapPartitions(partitions, (ctx, it) ->
        {
            final int attempt = ctx.stageAttemptNumber();
            try (Communicator comm = SparkHccl.init(ctx, config()))
            {
                final ByteBuffer b = floats(1);
                b.putFloat(0, comm.rank() + 1);
                if (attempt == 0 && comm.rank() == 3)
                {
                    while (!ctx.isInterrupted()) // never joins; Spark kills it when the stage fails
                    {
                        Thread.sleep(10);
                    }
                    throw new IllegalStateException("killed");
                }
                if (attempt == 0 && comm.rank() == 1)
                {
                    final Path next = Path.of(pidFile + ".next");
                    Files.writeString(next, Long.toString(ProcessHandle.current().pid()));
                    Files.move(next, Path.of(pidFile));
                }
                comm.allReduce(b, b, 1, DataType.FP32, ReduceOp.SUM);
                return List.of(attempt + ":" + b.getFloat(0)).iterator();
            }
        }).repartition(1).collect();
    }

    /** Starts {@link #killWhenItWaits} on a thread of its own. */
    private static Thread killer(final Path pidFile, final long[] killedAt)
    {
        final Thread killer = new Thread(() -> killWhenItWaits(pidFile, killedAt), "executor-killer");
        killer.setDaemon(true); // a stage that fails otherwise must not leave the driver waiting for it
        killer.start();
        return killer;
    }

    /** Waits for the victim's process id, lets it wait inside the all-reduce, then kills it with SIGKILL. */
    private static void killWhenItWaits(final Path pidFile, final long[] killedAt)
    {
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (!Files.exists(pidFile))
            {
                if (System.nanoTime() > deadline)
                {
                    throw new IllegalStateException("no task wrote " + pidFile);
                }
                Thread.sleep(10);
            }
            final long pid = Long.parseLong(Files.readString(pidFile).trim());
            Thread.sleep(200);
            final ProcessHandle victim = ProcessHandle.of(pid).orElseThrow();
            System.out.println("killing executor " + pid + ": " + victim.info().command().orElse("?"));
            killedAt[0] = System.nanoTime();
            victim.destroyForcibly();
        }
        catch (final Exception e)
        {
            throw new IllegalStateException(e);
        }
    }

    private static ByteBuffer floats(final int n)
    {
        return ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
    }

    private static String seconds(final long since)
    {
        return String.format("%.1f", (System.nanoTime() - since) / 1e9);
    }
}
