package dev.hccl.bench.jmh;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Collectives over the in-JVM transport: {@code worldSize} communicators from {@link Hccl#initAll(int, CommConfig)},
 * one FP32 collective per invocation, timed from the first rank's call until every rank has its result.
 * <p>
 * <b>How the ranks run.</b> Each invocation issues the collective on every rank through its asynchronous twin, from
 * the benchmark thread, and then joins every future. The algorithms run on each communicator's own execution stream
 * thread, exactly as they do when each rank is driven by a thread of its own (a blocking call is the asynchronous
 * call plus {@code join}), but without helper threads: no extra wake-up per operation, nothing to hand over between
 * threads, and, since an invocation only returns once every rank has finished, nothing outstanding when JMH stops
 * calling, so tear-down cannot deadlock.
 * <p>
 * <b>Size.</b> {@code size} is the call's count argument in bytes ({@code count * 4}), as in HCCL's API: the buffer of
 * allReduce and broadcast, each rank's contribution to allGather, each rank's share of the reduceScatter result, and
 * each block of allToAll. So allGather receives, reduceScatter sends and allToAll sends and receives
 * {@code worldSize * size} bytes per rank. The score is the time of one collective; divide the bytes by it for
 * nccl-tests' algorithm bandwidth (see docs/BENCHMARKS.md).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {
    BenchmarkSupport.ADD_OPENS, BenchmarkSupport.VECTOR_MODULE, BenchmarkSupport.QUIET_LOGGING})
public class CollectiveBenchmark
{
    /** Where broadcast starts. */
    private static final int ROOT = 0;

    /** Ranks, each a communicator of this JVM. */
    @Param({"2", "4"})
    public int worldSize;

    /** The count argument in bytes: 8 B (latency), 64 KiB, 4 MiB (bandwidth, several pipelined segments). */
    @Param({"8", "65536", "4194304"})
    public int size;

    /**
     * The algorithm override handed to {@link dev.hccl.api.CommConfigBuilder#algo(String)} ({@code HCCL_ALGO}'s
     * grammar); {@code auto} means none, the cost model's choice. Force others with {@code -p algo=ring,tree}.
     */
    @Param({"auto"})
    public String algo;

    private Communicator[] comms;
    private ByteBuffer[] send;
    private ByteBuffer[] recv;
    private CommFuture[] futures;
    private long count;

    /**
     * Creates the communicators and each rank's buffers, large enough for every collective of this class.
     */
    @Setup(Level.Trial)
    public void setUp()
    {
        if (size % DataType.FP32.size() != 0)
        {
            throw new IllegalArgumentException("size must be a multiple of 4 (FP32 elements), got " + size);
        }
        count = size / DataType.FP32.size();
        // Every rank's buffers hold worldSize blocks (allGather's output, reduceScatter's and allToAll's input).
        final int bufferBytes = Math.multiplyExact(worldSize, size);
        final CommConfig config = CommConfig.builder()
            .environment(Map.of())
            .worldSize(worldSize)
            .algo("auto".equals(algo) ? null : algo)
            // A lost rank would otherwise hang the run for HCCL_EXEC_TIMEOUT's default of half an hour.
            .execTimeout(Duration.ofSeconds(60))
            .conclude();
        final List<Communicator> created = Hccl.initAll(worldSize, config);
        comms = created.toArray(new Communicator[0]);
        send = new ByteBuffer[worldSize];
        recv = new ByteBuffer[worldSize];
        futures = new CommFuture[worldSize];
        try
        {
            final SplittableRandom random = new SplittableRandom(7);
            for (int r = 0; r < worldSize; r++)
            {
                send[r] = BenchmarkSupport.filled(DataType.FP32, bufferBytes / DataType.FP32.size(), random);
                recv[r] = ByteBuffer.allocateDirect(bufferBytes).order(ByteOrder.nativeOrder());
            }
        }
        catch (final RuntimeException | Error ex)
        {
            // Do not count on a tear-down after a failed set-up: stop the stream threads here (tearDown is idempotent).
            tearDown();
            throw ex;
        }
    }

    /**
     * Closes every communicator. Nothing is in flight: each invocation joined all of its operations.
     */
    @TearDown(Level.Trial)
    public void tearDown()
    {
        if (null != comms)
        {
            for (final Communicator comm : comms)
            {
                comm.close();
            }
            comms = null;
        }
    }

    /**
     * allReduce SUM of {@code size} bytes, out of place.
     */
    @Benchmark
    public void allReduce()
    {
        for (int r = 0; r < worldSize; r++)
        {
            futures[r] = comms[r].allReduceAsync(send[r], recv[r], count, DataType.FP32, ReduceOp.SUM);
        }
        joinAll();
    }

    /**
     * allGather of {@code size} bytes from each rank into {@code worldSize * size} bytes.
     */
    @Benchmark
    public void allGather()
    {
        for (int r = 0; r < worldSize; r++)
        {
            futures[r] = comms[r].allGatherAsync(send[r], recv[r], count, DataType.FP32);
        }
        joinAll();
    }

    /**
     * reduceScatter SUM of {@code worldSize * size} bytes; each rank receives {@code size} bytes.
     */
    @Benchmark
    public void reduceScatter()
    {
        for (int r = 0; r < worldSize; r++)
        {
            futures[r] = comms[r].reduceScatterAsync(send[r], recv[r], count, DataType.FP32, ReduceOp.SUM);
        }
        joinAll();
    }

    /**
     * broadcast of {@code size} bytes from rank 0, in place.
     */
    @Benchmark
    public void broadcast()
    {
        for (int r = 0; r < worldSize; r++)
        {
            futures[r] = comms[r].broadcastAsync(send[r], count, DataType.FP32, ROOT);
        }
        joinAll();
    }

    /**
     * allToAll of {@code worldSize} blocks of {@code size} bytes each way.
     */
    @Benchmark
    public void allToAll()
    {
        for (int r = 0; r < worldSize; r++)
        {
            futures[r] = comms[r].allToAllAsync(send[r], recv[r], count, DataType.FP32);
        }
        joinAll();
    }

    private void joinAll()
    {
        for (int r = 0; r < worldSize; r++)
        {
            futures[r].join();
            futures[r] = null;
        }
    }
}
