package dev.hccl.bench.jmh;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.Reducer;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The reduction kernels, {@code Reducers.of(type, op).reduce(dst, 0, src, 0, count)}, for every {@link DataType} and
 * {@link ReduceOp#SUM SUM}, {@link ReduceOp#PROD PROD}, {@link ReduceOp#MAX MAX}, {@link ReduceOp#MIN MIN}, and the
 * byte copy {@link Copies#copy}, on direct buffers of {@code size} bytes.
 * <p>
 * The primary score is calls per second; the secondary score {@code :gigabytes} is the bandwidth in GB/s
 * (10<sup>9</sup> bytes of {@code dst} per second; JMH labels its unit {@code ops/s}). A reduction reads {@code dst}
 * and {@code src} and writes {@code dst}, so its memory traffic is three times that figure; a copy's is twice.
 * <p>
 * {@link ReduceOp#AVG AVG} is not measured: it is the {@code SUM} kernel followed by one divide of the final result.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {
    BenchmarkSupport.ADD_OPENS, BenchmarkSupport.VECTOR_MODULE, BenchmarkSupport.QUIET_LOGGING})
public class ReduceKernelBenchmark
{
    /**
     * Bytes processed, as a JMH auxiliary counter: JMH divides it by the iteration's time, so it reads as GB/s.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bandwidth
    {
        /** Gigabytes (10<sup>9</sup> bytes) processed in this iteration so far. */
        public double gigabytes;

        /**
         * Counters are not reset by JMH itself.
         */
        @Setup(Level.Iteration)
        public void reset()
        {
            gigabytes = 0;
        }
    }

    /**
     * One kernel and its two operands.
     */
    @State(Scope.Thread)
    public static class KernelState
    {
        /** The element type; every type by default. */
        @Param
        public DataType type;

        /** The reduction; AVG is SUM plus a final divide, so it is left out. */
        @Param({"SUM", "PROD", "MAX", "MIN"})
        public ReduceOp op;

        /**
         * Bytes in each operand. 1 MiB by default, so that the whole matrix runs in minutes; pass
         * {@code -p size=65536,1048576,67108864} for cache-resident and memory-bound sizes as well.
         */
        @Param({"1048576"})
        public int size;

        Reducer kernel;
        ByteBuffer dst;
        ByteBuffer src;
        int count;
        double gigabytesPerCall;
        private ByteBuffer initialDst;

        /**
         * Allocates and fills both operands once per trial.
         */
        @Setup(Level.Trial)
        public void setUp()
        {
            kernel = Reducers.of(type, op);
            count = size / type.size();
            gigabytesPerCall = (double)count * type.size() / 1e9;
            final SplittableRandom random = new SplittableRandom(42);
            src = BenchmarkSupport.filled(type, count, random);
            initialDst = BenchmarkSupport.filled(type, count, random);
            dst = ByteBuffer.allocateDirect(count * type.size()).order(ByteOrder.nativeOrder());
        }

        /**
         * Restores {@code dst} before each iteration: every call folds {@code src} into it, so the values drift (SUM
         * and PROD grow towards the largest value or infinity); restoring makes the iterations alike. Floating-point
         * operands are all in [1, 2), so no result is ever subnormal, which would slow x86 arithmetic down by orders
         * of magnitude and measure the data rather than the kernel.
         */
        @Setup(Level.Iteration)
        public void resetDestination()
        {
            Copies.copy(dst, 0, initialDst, 0, initialDst.capacity());
        }
    }

    /**
     * Source and destination of a plain copy.
     */
    @State(Scope.Thread)
    public static class CopyState
    {
        /** Bytes copied per call; see {@link KernelState#size}. */
        @Param({"1048576"})
        public int size;

        ByteBuffer dst;
        ByteBuffer src;
        double gigabytesPerCall;

        /**
         * Allocates both buffers once per trial.
         */
        @Setup(Level.Trial)
        public void setUp()
        {
            src = BenchmarkSupport.filled(DataType.INT8, size, new SplittableRandom(42));
            dst = ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
            gigabytesPerCall = size / 1e9;
        }
    }

    /**
     * {@code dst[i] = dst[i] op src[i]} over {@code size} bytes.
     *
     * @param state     the kernel and operands.
     * @param bandwidth the GB/s counter.
     */
    @Benchmark
    public void reduce(final KernelState state, final Bandwidth bandwidth)
    {
        // The kernel writes through Unsafe into native memory, which the JIT cannot prove dead: no Blackhole needed.
        state.kernel.reduce(state.dst, 0, state.src, 0, state.count);
        bandwidth.gigabytes += state.gigabytesPerCall;
    }

    /**
     * {@code Copies.copy} of {@code size} bytes between two direct buffers.
     *
     * @param state     the buffers.
     * @param bandwidth the GB/s counter.
     */
    @Benchmark
    public void copy(final CopyState state, final Bandwidth bandwidth)
    {
        Copies.copy(state.dst, 0, state.src, 0, state.size);
        bandwidth.gigabytes += state.gigabytesPerCall;
    }
}
