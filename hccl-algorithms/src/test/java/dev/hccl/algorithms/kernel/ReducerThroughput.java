package dev.hccl.algorithms.kernel;

import dev.hccl.api.Fp8Floats;
import dev.hccl.api.HalfFloats;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.Reducer;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * A rough single-threaded throughput probe for the kernels, not a test and not a benchmark of record (JMH in
 * {@code hccl-bench} is): prints destination bytes reduced per second over 64 MiB direct buffers, for the scalar
 * kernels and, when the JVM has {@code jdk.incubator.vector}, for the vector kernels too, run alternately so that both
 * see the same machine load. Each repetition reduces the same pristine destination; the figures are the median and the
 * best of the repetitions by wall-clock time, and the median by the thread's CPU time, which leaves out the time the
 * thread waited for a core on a loaded machine (but not the memory bandwidth that other processes take). It also checks
 * that both families produced the same bits. The FP16 and BF16 vector kernels are measured too, although the vector
 * family uses them only on request.
 * <p>
 * Run, after {@code mvn -pl hccl-algorithms test-compile}, with
 * {@code java --add-opens java.base/jdk.internal.misc=ALL-UNNAMED --add-modules jdk.incubator.vector
 * -cp <test-classes:classes:deps> dev.hccl.algorithms.kernel.ReducerThroughput FP32:SUM BF16:SUM} ({@code all} for
 * every type and operator). System properties: {@code reps} (repetitions, default 15), {@code warmup} (full-size
 * calls before them, default 5, after 2000 short ones), {@code mib} (buffer size, default 64).
 */
public final class ReducerThroughput
{
    private static final ReduceOp[] OPS = { ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN };

    private ReducerThroughput()
    {
    }

    /**
     * Entry point.
     *
     * @param args {@code TYPE:OP} pairs, or {@code all}; FP32:SUM when none.
     * @throws ReflectiveOperationException if the vector kernels are present but cannot be loaded.
     */
    public static void main(final String[] args) throws ReflectiveOperationException
    {
        final int reps = Integer.getInteger("reps", 15);
        final int warmup = Integer.getInteger("warmup", 5);
        final int bytes = Integer.getInteger("mib", 64) << 20;
        final ByteBuffer pristine = ByteBuffer.allocateDirect(bytes);
        final ByteBuffer dst = ByteBuffer.allocateDirect(bytes);
        final ByteBuffer src = ByteBuffer.allocateDirect(bytes);
        final ByteBuffer scalarResult = ByteBuffer.allocateDirect(bytes);
        final KernelFactory vectors = KernelSelection.vectorModulePresent() ? KernelSelection.vectorFactory(true) : null;
        System.out.printf(
            "%d MiB direct buffers, %d repetitions after %d warm-up; GB/s = destination bytes / time; vector: %s%n",
            bytes >> 20, reps, warmup, vectors == null ? "absent (no --add-modules jdk.incubator.vector)" :
            vectors.description());
        System.out.printf("%-12s %29s   %29s   %6s  %s%n", "", "scalar GB/s", "vector GB/s", "", "");
        System.out.printf("%-12s %9s %9s %9s   %9s %9s %9s   %6s  %s%n",
            "kernel", "median", "best", "cpu", "median", "best", "cpu", "ratio", "bits");
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

        for (final String spec : specs(args))
        {
            final String[] parts = spec.split(":");
            final DataType type = DataType.valueOf(parts[0]);
            final ReduceOp op = ReduceOp.valueOf(parts[1]);
            final int count = bytes / type.size();
            // Ordinary values (no NaN, subnormal or overflow storms) so that the figure is the common case.
            final Random random = new Random(1);
            final byte[] content = new byte[bytes];
            fillOrdinary(type, random, content, count);
            pristine.put(0, content);
            fillOrdinary(type, random, content, count);
            src.put(0, content);

            final AbstractReducer scalar = Reducers.scalarKernel(type, op);
            final AbstractReducer vector = vectors == null ? null : vectors.kernel(scalar);
            final Reducer[] kernels = vector == null || vector == scalar ?
                new Reducer[] { scalar } : new Reducer[] { scalar, vector };
            // Many short calls first, so that C2 compiles the loops as a collective's many chunk-sized calls would
            // have them compiled, rather than only through on-stack replacement in the middle of a long call.
            final int shortCount = Math.min(count, 16384 / type.size());
            for (int call = 0; call < 2000; call++)
            {
                for (final Reducer kernel : kernels)
                {
                    dst.put(0, pristine, 0, shortCount * type.size());
                    kernel.reduce(dst, 0, src, 0, shortCount);
                }
            }
            awaitQuietJit();
            final long[][] nanos = new long[kernels.length][reps];
            final long[][] cpuNanos = new long[kernels.length][reps];
            for (int rep = -warmup; rep < reps; rep++)
            {
                for (int k = 0; k < kernels.length; k++)
                {
                    dst.put(0, pristine, 0, bytes);
                    final long cpuStart = threads.getCurrentThreadCpuTime();
                    final long start = System.nanoTime();
                    kernels[k].reduce(dst, 0, src, 0, count);
                    final long elapsed = System.nanoTime() - start;
                    final long cpuElapsed = threads.getCurrentThreadCpuTime() - cpuStart;
                    if (rep >= 0)
                    {
                        nanos[k][rep] = elapsed;
                        cpuNanos[k][rep] = cpuElapsed;
                    }
                    if (k == 0)
                    {
                        scalarResult.put(0, dst, 0, bytes);
                    }
                }
            }

            final double scalarMedian = bytes / (double)median(nanos[0]);
            final double scalarBest = bytes / (double)Arrays.stream(nanos[0]).min().orElseThrow();
            final double scalarCpu = bytes / (double)median(cpuNanos[0]);
            if (kernels.length == 1)
            {
                System.out.printf("%-12s %9.2f %9.2f %9.2f   %9s %9s %9s   %6s  %s%n", type + " " + op, scalarMedian,
                    scalarBest, scalarCpu, "-", "-", "-", "-", vector == scalar ? "(no vector kernel)" : "");
            }
            else
            {
                final double vectorMedian = bytes / (double)median(nanos[1]);
                final double vectorBest = bytes / (double)Arrays.stream(nanos[1]).min().orElseThrow();
                final double vectorCpu = bytes / (double)median(cpuNanos[1]);
                System.out.printf("%-12s %9.2f %9.2f %9.2f   %9.2f %9.2f %9.2f   %6.2f  %s%n", type + " " + op,
                    scalarMedian, scalarBest, scalarCpu, vectorMedian, vectorBest, vectorCpu,
                    vectorMedian / scalarMedian, (scalarResult.equals(dst) ? "same" : "DIFFERENT") +
                    (type == DataType.FP16 || type == DataType.BF16 ? " (vector only with -Dhccl.kernels.half=vector)" :
                    ""));
            }
        }
    }

    /**
     * Waits, up to five seconds, until the JIT has compiled nothing for 300 ms: on a machine with two hardware threads
     * a C2 compilation running beside the measured loop takes a good part of its core.
     */
    private static void awaitQuietJit()
    {
        final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported())
        {
            return;
        }
        final long deadline = System.nanoTime() + 5_000_000_000L;
        long last = jit.getTotalCompilationTime();
        while (System.nanoTime() < deadline)
        {
            try
            {
                Thread.sleep(300);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return;
            }
            final long now = jit.getTotalCompilationTime();
            if (now == last)
            {
                return;
            }
            last = now;
        }
    }

    private static String[] specs(final String[] args)
    {
        if (args.length == 0)
        {
            return new String[] { "FP32:SUM" };
        }
        if (args.length == 1 && args[0].equals("all"))
        {
            final List<String> all = new ArrayList<>();
            for (final DataType type : DataType.values())
            {
                for (final ReduceOp op : OPS)
                {
                    all.add(type + ":" + op);
                }
            }
            return all.toArray(new String[0]);
        }
        return args;
    }

    private static long median(final long[] values)
    {
        final long[] sorted = values.clone();
        Arrays.sort(sorted);
        final int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    private static void fillOrdinary(final DataType type, final Random random, final byte[] bytes, final int count)
    {
        final ByteBuffer out = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++)
        {
            final float value = (float)random.nextGaussian();
            final int at = i * type.size();
            switch (type)
            {
                case INT8, UINT8 -> out.put(at, (byte)random.nextInt());
                case INT16 -> out.putShort(at, (short)random.nextInt());
                case INT32 -> out.putInt(at, random.nextInt());
                case INT64 -> out.putLong(at, random.nextLong());
                case FP16 -> out.putShort(at, HalfFloats.floatToFp16(value));
                case BF16 -> out.putShort(at, HalfFloats.floatToBf16(value));
                case FP32 -> out.putFloat(at, value);
                case FP64 -> out.putDouble(at, value);
                case FP8_E4M3 -> out.put(at, Fp8Floats.floatToE4m3(value));
                case FP8_E5M2 -> out.put(at, Fp8Floats.floatToE5m2(value));
            }
        }
    }
}
