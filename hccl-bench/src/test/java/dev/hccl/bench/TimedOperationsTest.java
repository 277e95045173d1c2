package dev.hccl.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How many operations a measurement times, with and without {@code -n}. */
class TimedOperationsTest
{
    @Test
    void withoutNSmallSizesFillTheMinimumTimeAndLargeOnesKeepTheirTwenty()
    {
        final BenchOptions o = HcclBench.parse("all_reduce");
        assertEquals(100_000, TimedOperations.of(o, 1e-6), "1 us: 0.1 s is 100,000");
        assertEquals(10_000, TimedOperations.of(o, 10e-6));
        assertEquals(34, TimedOperations.of(o, 3e-3), "rounded up");
        assertEquals(20, TimedOperations.of(o, 10e-3), "twenty of 10 ms already fill 0.1 s");
        assertEquals(20, TimedOperations.of(o, 1.0));
        assertEquals(TimedOperations.MAX, TimedOperations.of(o, 1e-9), "bounded");
        assertEquals(TimedOperations.MAX, TimedOperations.of(o, 0), "a zero time is bounded too");
    }

    @Test
    void nGivenIsExactlyThatMany()
    {
        assertEquals(3, TimedOperations.of(HcclBench.parse("all_reduce", "-n", "3"), 1e-6));
        assertEquals(50, TimedOperations.of(HcclBench.parse("all_reduce", "-n", "50"), 1.0));
        assertEquals(34, TimedOperations.of(HcclBench.parse("all_reduce", "-w", "0"), 3e-3),
            "-w given and -n not: still timed for the minimum");
    }
}
