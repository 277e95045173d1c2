package dev.hccl.core.bootstrap;

import dev.hccl.api.CommConfig;

import java.util.concurrent.TimeUnit;

/**
 * When a rank that waits for others at creation says so: every 15 s, or four times in a shorter wait (at most once a
 * second), so that a job missing a rank is not silent until {@code HCCL_CONNECT_TIMEOUT} ends it.
 */
final class WaitReport
{
    private static final long LONGEST_NANOS = TimeUnit.SECONDS.toNanos(15);
    private static final long SHORTEST_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final long deadlineNanos;
    private final long intervalNanos;
    private long nextNanos;

    /**
     * Reports for a wait that ends at a deadline.
     *
     * @param deadlineNanos the deadline, as {@link System#nanoTime()}.
     */
    WaitReport(final long deadlineNanos)
    {
        final long now = System.nanoTime();
        this.deadlineNanos = deadlineNanos;
        this.intervalNanos = Math.max(SHORTEST_NANOS, Math.min(LONGEST_NANOS, (deadlineNanos - now) / 4));
        this.nextNanos = now + intervalNanos;
    }

    /**
     * How long to wait before looking again.
     *
     * @return the next report's time or the deadline, whichever comes first.
     */
    long sliceEnd()
    {
        return nextNanos - deadlineNanos < 0 ? nextNanos : deadlineNanos;
    }

    /**
     * Whether the wait may go on.
     *
     * @return true before the deadline.
     */
    boolean open()
    {
        return System.nanoTime() - deadlineNanos < 0;
    }

    /**
     * Whether a report is due; when it is, the next one is scheduled.
     *
     * @return true when the caller should report now: the deadline has not passed and an interval has.
     */
    boolean due()
    {
        final long now = System.nanoTime();
        if (now - deadlineNanos >= 0 || now - nextNanos < 0)
        {
            return false;
        }
        nextNanos = now + intervalNanos;
        return true;
    }

    /**
     * The time left, for a report.
     *
     * @return such as {@code 105 s left of HCCL_CONNECT_TIMEOUT}.
     */
    String left()
    {
        return Math.max(0, TimeUnit.NANOSECONDS.toSeconds(deadlineNanos - System.nanoTime())) + " s left of " +
            CommConfig.CONNECT_TIMEOUT;
    }
}
