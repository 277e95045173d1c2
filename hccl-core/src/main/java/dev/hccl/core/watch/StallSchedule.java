package dev.hccl.core.watch;

/**
 * When the stall check looks at a communicator next. A check at a fixed rate sees a wait only at the first check
 * after the wait has lasted the period: up to a period late, nearly twice {@code HCCL_STALL_CHECK_TIME} for a wait that
 * begins just after a check. Instead the next check comes when the current wait reaches its next multiple of the
 * period, or, with no wait, a period on, which no wait begun in between can have reached. A wait is thus reported as
 * soon as it has lasted the period, and again at each further period.
 */
final class StallSchedule
{
    /** The shortest delay, so that a wait just short of its mark is not looked at in a spin. */
    static final long MIN_DELAY_MILLIS = 1;

    private StallSchedule()
    {
    }

    /**
     * The delay until the next check.
     *
     * @param waitedMillis how long the current wait has lasted, or a negative value when the rank waits for nothing.
     * @param periodMillis {@code HCCL_STALL_CHECK_TIME}, positive.
     * @return milliseconds, in [{@value #MIN_DELAY_MILLIS}, periodMillis].
     */
    static long nextDelayMillis(final long waitedMillis, final long periodMillis)
    {
        if (waitedMillis < 0)
        {
            return periodMillis;
        }
        return Math.max(MIN_DELAY_MILLIS, periodMillis - waitedMillis % periodMillis);
    }
}
