package dev.hccl.core.watch;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The stall check's timing on a simulated clock: the watchdog's looks follow {@link StallSchedule} exactly as its
 * timer would, on time, so the times a wait is reported at are exact.
 */
class StallScheduleTest
{
    private static final long PERIOD = 1000;

    /**
     * Runs the watchdog's looks from its start (the first a period on) until {@code endMillis}.
     *
     * @param waitStart when the only wait begins (it never ends).
     * @return how long the wait had lasted at each look that reported it (lasted at least the period).
     */
    private static List<Long> reports(final long waitStart, final long endMillis)
    {
        final List<Long> reported = new ArrayList<>();
        for (long t = PERIOD; t <= endMillis; )
        {
            final long waited = t >= waitStart ? t - waitStart : -1;
            if (waited >= PERIOD)
            {
                reported.add(waited);
            }
            t += StallSchedule.nextDelayMillis(waited, PERIOD);
        }
        return reported;
    }

    @Test
    void aWaitIsFirstReportedWhenItHasLastedThePeriodWhateverItsPhase()
    {
        for (long start = 0; start < 3 * PERIOD; start += 37)
        {
            final List<Long> reported = reports(start, start + 3 * PERIOD + PERIOD / 2);
            assertEquals(List.of(PERIOD, 2 * PERIOD, 3 * PERIOD), reported,
                "a wait begun at " + start + " ms: it must be reported after 1, 2 and 3 periods, not up to one late");
        }
    }

    @Test
    void aWaitJustAfterALookIsNotReportedAPeriodLate()
    {
        // The case of the issue: a fixed-rate check at 1000 ms sees a wait begun at 1001 ms first at 2000 ms (999 ms
        // old) and reports it at 3000 ms, after 1999 ms.
        assertEquals(PERIOD, reports(PERIOD + 1, 4 * PERIOD).get(0).longValue());
    }

    @Test
    void theDelayIsAtMostThePeriodAndNeverZero()
    {
        assertEquals(PERIOD, StallSchedule.nextDelayMillis(-1, PERIOD), "idle: a period on");
        assertEquals(PERIOD, StallSchedule.nextDelayMillis(0, PERIOD));
        assertEquals(1, StallSchedule.nextDelayMillis(PERIOD - 1, PERIOD));
        assertEquals(PERIOD, StallSchedule.nextDelayMillis(PERIOD, PERIOD), "just reported: the next period");
        assertEquals(300, StallSchedule.nextDelayMillis(2 * PERIOD + 700, PERIOD));
        for (long waited = -1; waited < 5 * PERIOD; waited++)
        {
            final long delay = StallSchedule.nextDelayMillis(waited, PERIOD);
            assertTrue(delay >= StallSchedule.MIN_DELAY_MILLIS && delay <= PERIOD, waited + " -> " + delay);
        }
    }
}
