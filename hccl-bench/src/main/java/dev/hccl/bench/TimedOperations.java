package dev.hccl.bench;

import java.util.Locale;

/**
 * How many operations a measurement times. With {@code -n} given, that many. Without it, at least
 * {@link BenchOptions#DEFAULT_ITERS} and as many as fill {@link #MIN_SECONDS} at the size's warmed rate, as OSU's
 * benchmarks time ten times more iterations of small messages than of large ones: twenty operations of a microsecond
 * are 20 us, and one stall of a shared core (a preemption, a safepoint) in them moves the row several-fold, so that a
 * first row read like a slow library. Large sizes keep their twenty, which already take longer than that.
 */
final class TimedOperations
{
    /** The least time a measurement spans without {@code -n}. */
    static final double MIN_SECONDS = 0.1;
    /** At most this many: a bound on the operations issued at once when they are asynchronous. */
    static final int MAX = 100_000;

    private TimedOperations()
    {
    }

    /**
     * @param options       the run's options.
     * @param secondsPerOp the warmed time per operation, the same on every rank (combined), so that every rank times as
     *                     many.
     * @return the operations to time.
     */
    static int of(final BenchOptions options, final double secondsPerOp)
    {
        if (!options.timeForMinimum())
        {
            return options.iters();
        }
        final double filling = Math.ceil(MIN_SECONDS / Math.max(secondsPerOp, 1e-9));
        return (int)Math.max(options.iters(), Math.min(MAX, filling));
    }

    /** What the header says. */
    static String description(final BenchOptions options)
    {
        return String.format(Locale.ROOT, "at least %d operations at each size and as many as fill %.1f s at its "
            + "warmed rate (at most %,d); -n N times N", options.iters(), MIN_SECONDS, MAX);
    }
}
