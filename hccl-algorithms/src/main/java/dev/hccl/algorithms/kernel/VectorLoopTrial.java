package dev.hccl.algorithms.kernel;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a vector kernel's loop runs compiled yet, judged from the kernel's own calls. Until the JIT's optimizing
 * compiler has compiled it, a loop written with the Vector API runs the API's Java fallback, many times slower than
 * the scalar loop, which the JIT compiles early (a plain loop, compiled on the stack in the middle of its first large
 * call). Where many JVMs start on few cores the compiler's queue stays long for seconds, and a job's first large
 * operations ran the fallback (docs/PERFORMANCE.md).
 * <p>
 * So, until the trial is {@linkplain #proven() proven}, a call of at least {@link #MIN_BYTES} runs most of its
 * work through the scalar kernel: one such call in {@link #TIMED_EVERY} runs its first {@link #TRIAL_BYTES} through
 * the vector loop and the rest through the scalar kernel, timing each ({@link #record}), and the others their first
 * {@link #FEED_BYTES}. Once the vector loop has taken at most {@link #COMPILED_RATIO} times the scalar kernel's time a
 * byte in {@link #WINS} timed calls in a row, every call takes it whole. The fed bytes keep the loop's calls frequent:
 * the JIT compiles first the methods of its queue that are called most, and a loop that ran only the timed calls
 * waited behind the others for many operations. Smaller calls take the vector loop from the first: the fallback
 * costs them little in all, and their calls, as the reductions' warm-up's ({@link KernelWarmUp}), get it compiled.
 * <p>
 * The trial asks whether the loop is compiled, not which family is faster: {@link KernelSelection} chose that.
 * Both loops give the same bits for every element ({@code VectorKernelsTest}), NaN payloads aside, so where the split
 * falls changes no result. Proven once, a trial stays proven. Threads may call at once: the count of wins is a plain
 * field (a race loses or repeats a win, no more), the verdict a volatile one.
 */
final class VectorLoopTrial
{
    /** The smallest call that is split while the trial is open. */
    static final int MIN_BYTES = 16 * 1024;
    /** Bytes of a split call that go through the vector loop, timed: a multiple of every vector's length. */
    static final int TRIAL_BYTES = 4 * 1024;
    /** Bytes of the other split calls that go through the vector loop, untimed: a multiple of every vector's length. */
    static final int FEED_BYTES = 256;
    /** One split call in this many is timed. */
    static final int TIMED_EVERY = 8;
    /**
     * How much longer a byte may take in the vector loop than in the scalar kernel for the loop to pass for compiled.
     * Not 1: the vector part of a call comes first, before the memory's prefetch has ramped up, so a compiled loop
     * reading a peer's data seldom beats the scalar kernel on its first bytes. Far below what the loop takes
     * uncompiled (docs/PERFORMANCE.md).
     */
    static final double COMPILED_RATIO = 2;
    /** Timed calls in a row in which the vector loop must be as fast a byte as {@link #COMPILED_RATIO} allows. */
    static final int WINS = 3;

    private static final Logger LOG = LoggerFactory.getLogger(VectorLoopTrial.class);

    /** The kernel on trial, for the log. */
    private final String kernel;
    private volatile boolean proven;
    private int wins;
    private int splitCalls;

    /**
     * @param kernel the kernel on trial, as the log names it.
     */
    VectorLoopTrial(final String kernel)
    {
        this.kernel = kernel;
    }

    /**
     * Whether calls take the vector loop whole.
     *
     * @return true once the vector loop has passed for compiled in {@link #WINS} timed calls in a row.
     */
    boolean proven()
    {
        return proven;
    }

    /**
     * The bytes of a split call to run through the vector loop: {@link #TRIAL_BYTES}, to be timed, in one call of
     * {@link #TIMED_EVERY}, else {@link #FEED_BYTES}.
     *
     * @return the bytes.
     */
    int vectorBytes()
    {
        return ++splitCalls % TIMED_EVERY == 0 ? TRIAL_BYTES : FEED_BYTES;
    }

    /**
     * Takes the timings of one split call.
     *
     * @param vectorNanos time the vector loop took.
     * @param vectorBytes bytes it reduced.
     * @param scalarNanos time the scalar kernel took.
     * @param scalarBytes bytes it reduced.
     */
    void record(final long vectorNanos, final long vectorBytes, final long scalarNanos, final long scalarBytes)
    {
        if ((double)vectorNanos * scalarBytes < COMPILED_RATIO * scalarNanos * vectorBytes)
        {
            if (++wins >= WINS && !proven)
            {
                proven = true;
                LOG.debug("{}: the vector loop takes whole calls from now on, after {} split calls", kernel,
                    splitCalls);
            }
        }
        else
        {
            wins = 0;
        }
    }

    /**
     * Ends the trial: every call takes the vector loop whole from now on. For tests that check the compiled loop on
     * every call.
     */
    void prove()
    {
        proven = true;
    }
}
