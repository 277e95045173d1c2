package dev.hccl.algorithms.kernel;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reductions' warm-up runs whole rounds of small calls and a probe per type, at most {@link KernelWarmUp#ROUNDS}
 * of them, copies in every round, and nothing past its budget.
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
        // Every round copies, whether or not its types have settled: the copy's call is compiled after thousands.
        final int copies = KernelWarmUp.ROUNDS * KernelWarmUp.COPIES_PER_ROUND;
        final int reductions = calls - copies;
        final int round = KernelWarmUp.CALLS_PER_PROBE + 1;
        assertTrue(reductions > 0, "ran " + calls + " calls, " + copies + " of them copies");
        assertEquals(0, reductions % round, reductions + " reductions");
        assertTrue(reductions <= 4 * KernelWarmUp.ROUNDS * round, reductions + " reductions: more rounds than four " +
            "types have");
    }
}
