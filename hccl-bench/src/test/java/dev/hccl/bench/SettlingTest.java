package dev.hccl.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When the warm-up of a size stops: once the time no longer falls and the least time passed, or at its budget. */
class SettlingTest
{
    @Test
    void aTimeThatStillFallsIsNotSettledAndOneThatStoppedFallingIs()
    {
        final Settling s = new Settling();
        assertFalse(s.settled(300e-6, 1), "the first operation only sizes the batches");
        assertFalse(s.settled(60e-6, 1000), "0.06 s");
        assertFalse(s.settled(30e-6, 1000), "half the time: still falling");
        assertFalse(s.settled(20e-6, 2000), "a third less: still falling");
        assertFalse(s.settled(19e-6, 2000), "5 % less: quiet once");
        assertFalse(s.settled(21e-6, 2000), "no faster: quiet twice");
        assertTrue(s.settled(20e-6, 2000), "quiet three times, 0.22 s in all");
    }

    @Test
    void aQuietTimeBeforeTheLeastWarmUpIsNotSettledAndAFallStartsTheCountAgain()
    {
        final Settling s = new Settling();
        s.settled(100e-6, 1);
        assertFalse(s.settled(50e-6, 100));
        assertFalse(s.settled(50e-6, 100));
        assertFalse(s.settled(50e-6, 100));
        assertFalse(s.settled(50e-6, 100), "quiet four times, but only 0.02 s: a plateau before the JIT's second pass");
        assertFalse(s.settled(20e-6, 5000), "the optimised path: far faster, the count starts again");
        assertFalse(s.settled(20e-6, 5000), "quiet once");
        assertFalse(s.settled(20.5e-6, 5000), "quiet twice");
        assertTrue(s.settled(20e-6, 5000), "quiet three times, 0.42 s in all");
    }

    @Test
    void theBudgetEndsAWarmUpThatNeverSettlesAndABatchLastsAboutTenMilliseconds()
    {
        final Settling s = new Settling();
        s.settled(0.2, 1);
        assertFalse(s.settled(0.1, 2));
        assertFalse(s.settled(0.05, 4), "0.2 + 0.2 + 0.2 s so far");
        assertTrue(s.settled(0.025, 20), "past 1 s in all, still falling");
        assertEquals(1, new Settling().nextBatch(0.02), "an operation of 20 ms: one a batch");
        assertEquals(1000, new Settling().nextBatch(10e-6));
        assertEquals(Settling.MAX_BATCH, new Settling().nextBatch(1e-12));
    }
}
