package dev.hccl.bench;

/**
 * When a size is warm: untimed batches of operations run until their time per operation settles, as JMH warms a
 * benchmark before it measures, because a JVM's first calls of a path run interpreted and then compiled while the
 * caller waits. A batch lasts about {@link #BATCH_SECONDS} (its size from the batch before). A batch is quiet when its
 * time is within {@link #MARGIN} below and {@link #BAND} above the best batch before it (the time neither falls nor
 * jumps about), and no rank's JIT worked while it ran ({@link JitActivity}: a compilation still under way changes the
 * code the next batch runs, as Caliper checks; until it lands, the batches run the slower code of the tier before at
 * a steady pace of their own). The time has settled once {@link #QUIET_BATCHES} batches in a row are quiet and
 * {@link #MIN_SECONDS} have passed, or after {@link #MAX_SECONDS} in all. Every rank feeds it the same combined
 * figures, so every rank stops at the same batch.
 */
final class Settling
{
    /** What the header says. */
    static final String DESCRIPTION = "each size until its time per operation settles (batches of about 10 ms until "
        + "three in a row are within 10 % below and 50 % above the best before them and the JIT worked less than "
        + "1 ms during each, 0.2 to 3 s)";
    static final double BATCH_SECONDS = 0.010;
    static final int QUIET_BATCHES = 3;
    /**
     * The least warm-up: a JVM compiles a hot path a second time, optimised, after thousands of calls, and a plateau
     * before that must not pass for settled.
     */
    static final double MIN_SECONDS = 0.2;
    /**
     * The JIT's work (CPU time of its threads) that a quiet batch may hold: compiler threads that only woke up, not a
     * compilation.
     */
    static final long JIT_QUIET_NANOS = 1_000_000;
    /** How much faster than the best before it a quiet batch may be: more is a time still falling. */
    static final double MARGIN = 0.10;
    /**
     * How much slower than the best before it a quiet batch may be: more is a time that still jumps about, as it does
     * while two JVMs share their cores with the JIT's threads, and must not pass for settled because it no longer
     * falls.
     */
    static final double BAND = 0.50;
    /**
     * The budget of one size: a JVM's compiler threads reach an operation's whole path seconds after its first calls
     * when the ranks hold every core, and the first size is the one that waits for them.
     */
    static final double MAX_SECONDS = 3.0;
    /** Operations in one batch at most: a batch of the smallest sizes stays near {@link #BATCH_SECONDS} anyway. */
    static final int MAX_BATCH = 100_000;

    private double best = Double.MAX_VALUE;
    private int quiet;
    private double spent;
    private int batches;

    /**
     * Counts a batch.
     *
     * @param secondsPerOp its time per operation, combined across ranks.
     * @param operations   its operations.
     * @param compiled     whether any rank's JIT worked more than {@link #JIT_QUIET_NANOS} while it ran.
     * @return whether the time has settled (or the budget is spent).
     */
    boolean settled(final double secondsPerOp, final int operations, final boolean compiled)
    {
        batches++;
        spent += secondsPerOp * operations;
        // The first batch of one operation only sizes the next: it is the slowest there is.
        if (batches > 1)
        {
            final boolean steady = secondsPerOp >= best * (1 - MARGIN) && secondsPerOp <= best * (1 + BAND);
            quiet = steady && !compiled ? quiet + 1 : 0;
        }
        best = Math.min(best, secondsPerOp);
        return quiet >= QUIET_BATCHES && spent >= MIN_SECONDS || spent >= MAX_SECONDS;
    }

    /**
     * @param secondsPerOp the last batch's time per operation.
     * @return the operations of the next batch: about {@link #BATCH_SECONDS} at that time.
     */
    int nextBatch(final double secondsPerOp)
    {
        return (int)Math.max(1, Math.min(MAX_BATCH, Math.round(BATCH_SECONDS / Math.max(secondsPerOp, 1e-9))));
    }
}
