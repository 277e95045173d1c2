package dev.hccl.bench;

/**
 * When a size is warm: untimed batches of operations run until their time per operation settles, as JMH warms a
 * benchmark before it measures, because a JVM's first calls of a path run interpreted and then compiled while the
 * caller waits. A batch lasts about {@link #BATCH_SECONDS} (its size from the batch before); the time has settled
 * once {@link #QUIET_BATCHES} batches in a row are no more than {@link #MARGIN} faster than the best batch before
 * them (the time no longer falls) and {@link #MIN_SECONDS} have passed, or after {@link #MAX_SECONDS} in all. Every rank feeds it the same combined times, so every rank stops at the same batch.
 */
final class Settling
{
    /** What the header says. */
    static final String DESCRIPTION = "each size until its time per operation settles (batches of about 10 ms until "
        + "three in a row are no more than 10 % faster than the best before them, 0.2 to 1 s)";
    static final double BATCH_SECONDS = 0.010;
    static final int QUIET_BATCHES = 3;
    /**
     * The least warm-up: a JVM compiles a hot path a second time, optimised, after thousands of calls, and a plateau
     * before that must not pass for settled.
     */
    static final double MIN_SECONDS = 0.2;
    static final double MARGIN = 0.10;
    static final double MAX_SECONDS = 1.0;
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
     * @return whether the time has settled (or the budget is spent).
     */
    boolean settled(final double secondsPerOp, final int operations)
    {
        batches++;
        spent += secondsPerOp * operations;
        // The first batch of one operation only sizes the next: it is the slowest there is.
        if (batches > 1)
        {
            quiet = secondsPerOp >= best * (1 - MARGIN) ? quiet + 1 : 0;
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
