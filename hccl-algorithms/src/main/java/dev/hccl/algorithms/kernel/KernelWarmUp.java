package dev.hccl.algorithms.kernel;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.NativeCopy;
import dev.hccl.api.spi.Reducer;

import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Runs the common SUM reductions and the copy on a local buffer until the JIT has compiled them, so that a job's
 * first large operations do not run them interpreted. A reduction written with the Vector API runs some hundred times
 * slower before its loop is compiled: a job's first all-reduce of 8 MiB took 300 ms where a warmed one takes 2, and
 * the collective warm-up's operations are too few and too small to make the JIT compile the loops.
 * <p>
 * Small calls ({@link #SMALL_BYTES}), cheap even interpreted, count the invocations that make the JIT compile a
 * reduction, and a call of {@link #PROBE_BYTES} after every {@link #CALLS_PER_PROBE} of them the loop's iterations:
 * {@link #ROUNDS} such rounds per type pass the JIT's thresholds for its optimizing compiler, which then compiles in
 * the background while init goes on. A type whose probe already takes under {@link #SETTLED_FRACTION} of its first
 * one runs compiled code and needs no more rounds. The types take turns, so that a short budget warms each a little.
 * The budget is the calling thread's CPU time, not the clock's: where many JVMs start on few cores (eight ranks on
 * two) a budget of wall time was spent before the thread got a core.
 * <p>
 * Where the C library's copy is bound but its call not yet compiled ({@link NativeCopy#ready()}: JDK 17's downcall, a
 * chain of method handles that runs interpreted for its first thousands of calls), the copy takes turns with them:
 * {@link #COPIES_PER_ROUND} calls of {@link NativeCopy#MIN_BYTES} a round, then a timed call of {@link #PROBE_BYTES}
 * beside the JVM's copy of as much; once it takes at most {@link #COMPILED_RATIO} times the JVM's time, callers take
 * it ({@link NativeCopy#markCompiled}). Until then they keep the JVM's copy: the JIT's work on the call, done during a
 * job's first operations, and the interpreted calls made those slower (docs/PERFORMANCE.md).
 * <p>
 * Local: it touches no peer and no shared memory, so each rank may run it whenever it likes, on any thread.
 */
public final class KernelWarmUp
{
    /** The types warmed: the dense ones a job reduces, the collective warm-up's. */
    private static final DataType[] TYPES = {DataType.FP32, DataType.FP64, DataType.INT64, DataType.INT32};
    /** Bytes of the calls that count invocations: a few iterations of a vector loop and its tail. */
    static final int SMALL_BYTES = 256;
    /**
     * Bytes of a probe: long enough that the compiled loop's speed shows, and short of the calls that a vector kernel
     * splits while its loop is on trial ({@link VectorLoopTrial}), so that the probe runs the vector loop whole.
     */
    static final int PROBE_BYTES = VectorLoopTrial.MIN_BYTES / 2;
    /** Small calls of a type between its probes. */
    static final int CALLS_PER_PROBE = 250;
    /** Rounds per type at most: some 10,000 calls and 40,000 iterations of a vector loop. */
    static final int ROUNDS = 40;
    /** A probe this much faster than the first says the loop is compiled. */
    static final double SETTLED_FRACTION = 0.05;
    /** Copies a round: {@link #ROUNDS} rounds make 15,000, past the JIT's thresholds for compiling the copy's call. */
    static final int COPIES_PER_ROUND = 375;
    /**
     * How much longer than the JVM's copy the C library's may take for its call to pass for compiled: it adds a call
     * into C; interpreted, it takes tens of times longer.
     */
    static final double COMPILED_RATIO = 4;

    private KernelWarmUp()
    {
    }

    /**
     * Warms the reductions and the copy up, on the calling thread.
     *
     * @param budgetNanos the calling thread's CPU time to spend at most (its wall time where the JVM cannot tell
     *                    a thread's CPU time).
     * @return the calls made, over every type; 0 for a budget of 0.
     */
    public static int run(final long budgetNanos)
    {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final boolean cpu = threads.isCurrentThreadCpuTimeSupported();
        final long deadlineNanos = now(threads, cpu) + budgetNanos;
        final ByteBuffer into = ByteBuffer.allocateDirect(PROBE_BYTES).order(ByteOrder.nativeOrder());
        final ByteBuffer from = ByteBuffer.allocateDirect(PROBE_BYTES).order(ByteOrder.nativeOrder());
        final Reducer[] reducers = new Reducer[TYPES.length];
        final long[] firstProbe = new long[TYPES.length];
        final boolean[] settled = new boolean[TYPES.length];
        for (int t = 0; t < TYPES.length; t++)
        {
            reducers[t] = Reducers.of(TYPES[t], ReduceOp.SUM);
        }
        int calls = 0;
        int unsettled = TYPES.length;
        // The reductions' rounds until their types settle, and the copy's while its call is not compiled yet.
        for (int round = 0; (round < ROUNDS && unsettled > 0) || nativeCopyCold(); round++)
        {
            if (now(threads, cpu) - deadlineNanos >= 0)
            {
                return calls;
            }
            if (nativeCopyCold())
            {
                warmNativeCopy(into, from);
            }
            for (int t = 0; t < TYPES.length && round < ROUNDS; t++)
            {
                if (now(threads, cpu) - deadlineNanos >= 0)
                {
                    return calls;
                }
                if (settled[t])
                {
                    continue;
                }
                final Reducer reducer = reducers[t];
                final int size = TYPES[t].size();
                for (int i = 0; i < CALLS_PER_PROBE; i++)
                {
                    reducer.reduce(into, 0, from, 0, SMALL_BYTES / size);
                }
                final long start = System.nanoTime();
                reducer.reduce(into, 0, from, 0, PROBE_BYTES / size);
                final long took = Math.max(1, System.nanoTime() - start);
                calls += CALLS_PER_PROBE + 1;
                if (0 == firstProbe[t])
                {
                    firstProbe[t] = took;
                }
                else if (took < firstProbe[t] * SETTLED_FRACTION)
                {
                    settled[t] = true;
                    unsettled--;
                }
                Copies.copy(into, 0, from, 0, PROBE_BYTES);
            }
        }
        return calls;
    }

    /** The clock the budget is kept in: the thread's CPU time where the JVM tells it, else the wall clock. */
    private static long now(final ThreadMXBean threads, final boolean cpu)
    {
        return cpu ? threads.getCurrentThreadCpuTime() : System.nanoTime();
    }

    private static boolean nativeCopyCold()
    {
        return NativeCopy.available() && !NativeCopy.ready();
    }

    /** One round of the C library's copy, then the timed comparison that says whether its call runs compiled. */
    private static void warmNativeCopy(final ByteBuffer into, final ByteBuffer from)
    {
        final long intoAddress = BufferAccess.offset(into, 0);
        final long fromAddress = BufferAccess.offset(from, 0);
        for (int i = 0; i < COPIES_PER_ROUND; i++)
        {
            NativeCopy.copy(intoAddress, fromAddress, NativeCopy.MIN_BYTES);
        }
        final long start = System.nanoTime();
        NativeCopy.copy(intoAddress, fromAddress, PROBE_BYTES);
        final long nativeNanos = System.nanoTime() - start;
        // The JVM's copy, as Copies makes it while the C library's is not ready.
        final long jvmStart = System.nanoTime();
        Copies.copy(into, 0, from, 0, PROBE_BYTES);
        final long jvmNanos = Math.max(1, System.nanoTime() - jvmStart);
        if (nativeNanos <= COMPILED_RATIO * jvmNanos)
        {
            NativeCopy.markCompiled();
        }
        Reference.reachabilityFence(into);
        Reference.reachabilityFence(from);
    }
}
