package dev.hccl.spark;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import dev.hccl.transport.shm.ShmTransportProvider;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Communicators in barrier stages of a real Spark, in local mode: every task is a thread of this JVM and a rank over
 * shared memory or TCP, beside Spark's own Netty 4.1. A failed or killed task must end its stage's communicator on
 * every rank at once, and Spark's retry of the stage must get a fresh one that works.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SparkHcclTest
{
    private static final int RANKS = LocalSpark.SLOTS;
    /** How long a stage may take to fail after one task fails: far below every timeout of the library. */
    private static final long FAIL_FAST_MILLIS = 30_000;
    /** What the tasks of a test saw: keyed by "attempt/rank". Ranks are threads of this JVM. */
    private static final Map<String, Object> SEEN = new ConcurrentHashMap<>();

    private static JavaSparkContext sc;

    @BeforeAll
    static void startSpark()
    {
        sc = LocalSpark.context();
    }

    @BeforeEach
    void forget()
    {
        SEEN.clear();
    }

    private static JavaRDD<Integer> partitions()
    {
        final List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < RANKS; i++)
        {
            ids.add(i);
        }
        return sc.parallelize(ids, RANKS);
    }

    /** Timeouts no test should reach: a stage that waits for one has hung. */
    private static CommConfig config(final boolean tcp)
    {
        return CommConfig.builder().execTimeout(Duration.ofSeconds(600)).connectTimeout(Duration.ofSeconds(60))
            .set(ShmTransportProvider.DISABLE, tcp).conclude();
    }

    @ParameterizedTest(name = "tcp={0}")
    @ValueSource(booleans = {false, true})
    void everyRankIsAPartitionAndTheCollectivesAreRight(final boolean tcp)
    {
        final List<String> out = SparkHccl.mapPartitions(partitions(), (ctx, it) ->
        {
            try (Communicator comm = SparkHccl.init(ctx, config(tcp)))
            {
                final int n = comm.worldSize();
                final ByteBuffer one = floats(1);
                one.putFloat(0, comm.rank() + 1);
                comm.allReduce(one, one, 1, DataType.FP32, ReduceOp.SUM);
                final ByteBuffer all = floats(n);
                final ByteBuffer mine = floats(1);
                mine.putFloat(0, 10 * comm.rank());
                comm.allGather(mine, all, 1, DataType.FP32);
                final ByteBuffer root = floats(1);
                root.putFloat(0, comm.rank() == 3 ? 42 : -1);
                comm.broadcast(root, 1, DataType.FP32, 3);
                final ByteBuffer scatterIn = floats(n);
                for (int i = 0; i < n; i++)
                {
                    scatterIn.putFloat(i * Float.BYTES, i + comm.rank());
                }
                final ByteBuffer scatterOut = floats(1);
                comm.reduceScatter(scatterIn, scatterOut, 1, DataType.FP32, ReduceOp.SUM);
                final StringBuilder gathered = new StringBuilder();
                for (int i = 0; i < n; i++)
                {
                    gathered.append(i == 0 ? "" : ",").append((int)all.getFloat(i * Float.BYTES));
                }
                return List.of(ctx.partitionId() + ":" + comm.rank() + "/" + n + " sum=" + one.getFloat(0) +
                    " gather=" + gathered + " bcast=" + root.getFloat(0) + " rs=" + scatterOut.getFloat(0)).iterator();
            }
        }).collect();
        assertEquals(RANKS, out.size());
        for (int r = 0; r < RANKS; r++)
        {
            // reduceScatter: rank r gets the sum over ranks q of (r + q) = 4r + 6.
            assertEquals(r + ":" + r + "/4 sum=10.0 gather=0,10,20,30 bcast=42.0 rs=" + (4f * r + 6), out.get(r));
        }
    }

    @Test
    void aFailedTaskFailsTheOthersAtOnceAndTheRetryGetsAFreshCommunicator()
    {
        final long started = System.nanoTime();
        final List<String> out = SparkHccl.mapPartitions(partitions(), (ctx, it) ->
        {
            final int attempt = ctx.stageAttemptNumber();
            try (Communicator comm = SparkHccl.init(ctx, config(false)))
            {
                final ByteBuffer b = floats(1);
                b.putFloat(0, comm.rank() + 1);
                // A rank may still be in this first all-reduce when the failure reaches it: it waits for a rank that
                // has completed it, and the failure fails every pending operation.
                recordedSum(comm, b, attempt);
                if (attempt == 0 && comm.rank() == 2)
                {
                    SEEN.put("failed at", System.nanoTime());
                    throw new IllegalStateException("rank 2 fails on purpose");
                }
                return List.of(attempt + ":" + recordedSum(comm, b, attempt)).iterator();
            }
        }).repartition(1).collect(); // a shuffle after it: Spark retries a failed barrier stage only when it maps
        assertEquals(List.of("1:40.0", "1:40.0", "1:40.0", "1:40.0"), out, "the retry, attempt 1, computes right");
        final long failedAt = (Long)SEEN.get("failed at");
        for (final int r : new int[] {0, 1, 3})
        {
            final HcclException e = assertInstanceOf(HcclException.class, SEEN.get("0/" + r), "rank " + r);
            assertEquals(ErrorCode.E_REMOTE, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("rank 2"), e.getMessage());
            final long after = TimeUnit.NANOSECONDS.toMillis((Long)SEEN.get("0/" + r + " at") - failedAt);
            assertTrue(after < FAIL_FAST_MILLIS, "rank " + r + " failed " + after + " ms after rank 2");
        }
        assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(120), "the job hung");
    }

    @Test
    void aTaskKilledInsideACollectiveEndsTheStageAndTheRetryWorks() throws Exception
    {
        // Inside the allReduce by 200 ms after it says it waits.
        final Thread killer = killLater("0/1 waits", "0/1 task", 200);
        final List<String> out = SparkHccl.mapPartitions(partitions(), (ctx, it) ->
        {
            final int attempt = ctx.stageAttemptNumber();
            try (Communicator comm = SparkHccl.init(ctx, config(false)))
            {
                final ByteBuffer b = floats(1);
                b.putFloat(0, comm.rank() + 1);
                if (attempt == 0 && comm.rank() == 3)
                {
                    // Never joins: rank 1 waits inside the allReduce until the kill ends it.
                    waitUntilKilled(ctx);
                }
                if (attempt == 0 && comm.rank() == 1)
                {
                    SEEN.put("0/1 task", ctx.taskAttemptId());
                    SEEN.put("0/1 waits", true);
                }
                return List.of(attempt + ":" + recordedSum(comm, b, attempt)).iterator();
            }
        }).repartition(1).collect();
        killer.join();
        assertEquals(List.of("1:10.0", "1:10.0", "1:10.0", "1:10.0"), out, "the retry, attempt 1, computes right");
        final long killedAt = (Long)SEEN.get("killed at");
        final HcclException own = assertInstanceOf(HcclException.class, SEEN.get("0/1"));
        assertEquals(ErrorCode.E_UNAVAIL, own.errorCode(), own.getMessage());
        for (final int r : new int[] {0, 1, 2})
        {
            final long after = TimeUnit.NANOSECONDS.toMillis((Long)SEEN.get("0/" + r + " at") - killedAt);
            assertTrue(after < FAIL_FAST_MILLIS, "rank " + r + " failed " + after + " ms after the kill");
        }
        for (final int r : new int[] {0, 2})
        {
            // Rank 1's abort reaches them, or Spark kills their tasks too, whichever is first.
            final HcclException e = assertInstanceOf(HcclException.class, SEEN.get("0/" + r), "rank " + r);
            assertTrue(e.errorCode() == ErrorCode.E_REMOTE || e.errorCode() == ErrorCode.E_UNAVAIL, e.getMessage());
        }
    }

    @Test
    void aTaskKilledWhileTheRanksSetUpEndsTheStageAndTheRetryWorks() throws Exception
    {
        // Inside SparkHccl.init by 300 ms after it starts, waiting for rank 3.
        final Thread killer = killLater("0/0 task", "0/0 task", 300);
        final List<String> out = SparkHccl.mapPartitions(partitions(), (ctx, it) ->
        {
            final int attempt = ctx.stageAttemptNumber();
            if (attempt == 0 && ctx.partitionId() == 3)
            {
                // Never sets up: the others wait for it in the rendezvous until the kill ends their wait.
                waitUntilKilled(ctx);
            }
            if (attempt == 0 && ctx.partitionId() == 0)
            {
                SEEN.put("0/0 task", ctx.taskAttemptId());
            }
            try (Communicator comm = SparkHccl.init(ctx, config(false)))
            {
                final ByteBuffer b = floats(1);
                b.putFloat(0, comm.rank() + 1);
                comm.allReduce(b, b, 1, DataType.FP32, ReduceOp.SUM);
                return List.of(attempt + ":" + b.getFloat(0)).iterator();
            }
            catch (final RuntimeException e)
            {
                SEEN.put(attempt + "/" + ctx.partitionId() + " at", System.nanoTime());
                throw e;
            }
        }).repartition(1).collect();
        killer.join();
        assertEquals(List.of("1:10.0", "1:10.0", "1:10.0", "1:10.0"), out, "the retry, attempt 1, computes right");
        final long killedAt = (Long)SEEN.get("killed at");
        for (final int r : new int[] {0, 1, 2})
        {
            final long after = TimeUnit.NANOSECONDS.toMillis((Long)SEEN.get("0/" + r + " at") - killedAt);
            assertTrue(after < FAIL_FAST_MILLIS, "rank " + r + " gave up " + after + " ms after the kill");
        }
    }

    /** An all-reduce SUM of {@code b}'s float; a failure is recorded in {@link #SEEN} with its time, and thrown. */
    private static float recordedSum(final Communicator comm, final ByteBuffer b, final int attempt)
    {
        try
        {
            comm.allReduce(b, b, 1, DataType.FP32, ReduceOp.SUM);
            return b.getFloat(0);
        }
        catch (final RuntimeException e)
        {
            SEEN.put(attempt + "/" + comm.rank(), e);
            SEEN.put(attempt + "/" + comm.rank() + " at", System.nanoTime());
            throw e;
        }
    }

    /** Spins until Spark kills the task (without interrupting it, as it kills a failed stage's tasks), then ends it. */
    private static void waitUntilKilled(final BarrierTaskContext ctx) throws InterruptedException
    {
        while (!ctx.isInterrupted())
        {
            Thread.sleep(10);
        }
        ctx.killTaskIfInterrupted();
    }

    /**
     * Kills a task, on a thread of its own, as Spark kills the other tasks of a failed barrier stage: without
     * interrupting its thread. Records when in {@code "killed at"}.
     *
     * @param ready       the key that the task puts in {@link #SEEN} when it is about to wait.
     * @param task        the key of its task attempt id.
     * @param afterMillis how long after that to kill it.
     * @return the thread, started.
     */
    private static Thread killLater(final String ready, final String task, final long afterMillis)
    {
        final Thread killer = new Thread(() ->
        {
            try
            {
                while (!SEEN.containsKey(ready))
                {
                    Thread.sleep(20);
                }
                Thread.sleep(afterMillis);
                SEEN.put("killed at", System.nanoTime());
                sc.sc().killTaskAttempt((Long)SEEN.get(task), false, "killed by the test");
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
            }
        });
        killer.start();
        return killer;
    }

    @Test
    void hostOfATaskAddress()
    {
        assertEquals("10.1.2.3", SparkHccl.hostOf("10.1.2.3:7078"));
        assertEquals("node-7.cluster", SparkHccl.hostOf("node-7.cluster:40123"));
        assertEquals("fe80::1", SparkHccl.hostOf("[fe80::1]:7078"));
        assertEquals("fe80::1", SparkHccl.hostOf("fe80::1"));
        assertEquals("host", SparkHccl.hostOf("host"));
    }

    @Test
    void initOutsideABarrierStageSaysWhatToDo()
    {
        final NullPointerException e = org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class,
            () -> SparkHccl.init((BarrierTaskContext)null));
        assertTrue(e.getMessage().contains("BarrierTaskContext.get()"), e.getMessage());
    }

    private static ByteBuffer floats(final int n)
    {
        return ByteBuffer.allocateDirect(n * Float.BYTES).order(ByteOrder.nativeOrder());
    }
}
