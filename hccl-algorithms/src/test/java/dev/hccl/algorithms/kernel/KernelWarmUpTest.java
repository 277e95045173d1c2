package dev.hccl.algorithms.kernel;

import dev.hccl.api.spi.NativeCopy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reductions' warm-up runs whole rounds of small calls and a probe per type, at most {@link KernelWarmUp#ROUNDS}
 * of them, makes the C library's copy ready where it is bound, and runs nothing past its budget.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KernelWarmUpTest
{
    @Test
    void aBudgetOfNothingRunsNothing()
    {
        assertEquals(0, KernelWarmUp.run(0));
    }

    @Test
    void itRunsWholeRoundsOfSmallCallsAndAProbeAndNoMoreThanItsRounds()
    {
        final int calls = KernelWarmUp.run(TimeUnit.SECONDS.toNanos(60));
        final int round = KernelWarmUp.CALLS_PER_PROBE + 1;
        assertTrue(calls > 0, "ran " + calls);
        assertEquals(0, calls % round, calls + " calls");
        assertTrue(calls <= 4 * KernelWarmUp.ROUNDS * round, calls + " calls: more rounds than four types have");
        // Given the time, the C library's copy, where bound, runs compiled afterwards and callers take it (on JDK 17
        // it starts out interpreted).
        assertEquals(NativeCopy.available(), NativeCopy.ready(), String.valueOf(NativeCopy.unavailable()));
    }
}
