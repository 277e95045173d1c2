package dev.hccl.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When the warm-up of a size stops: once the time no longer falls, or when its budget is spent. */
class SettlingTest
{
    @Test
    void aTimeThatStillFallsIsNotSettledAndOneThatStoppedFallingIs()
    {
        final Settling s = new Settling();
        assertFalse(s.settled(300e-6, 1), "the first operation only sizes the batches");
        assertFalse(s.settled(60e-6, 80));
        assertFalse(s.settled(30e-6, 80), "half the time: still falling");
        assertFalse(s.settled(20e-6, 160), "a third less: still falling");
        assertFalse(s.settled(19e-6, 250), "5 % less: quiet once");
        assertTrue(s.settled(21e-6, 250), "no faster: quiet twice");
    }

    @Test
    void aFallAfterAQuietBatchStartsTheCountAgain()
    {
        final Settling s = new Settling();
        s.settled(100e-6, 1);
        assertFalse(s.settled(50e-6, 100));
        assertFalse(s.settled(49e-6, 100), "quiet once");
        assertFalse(s.settled(20e-6, 100), "a compiled path: far faster, the count starts again");
        assertFalse(s.settled(20e-6, 100), "quiet once");
        assertTrue(s.settled(20.5e-6, 100));
    }

    @Test
    void theBudgetEndsAWarmUpThatNeverSettlesAndBatchesLastAboutFiveMilliseconds()
    {
        final Settling s = new Settling();
        s.settled(0.2, 1);
        assertFalse(s.settled(0.1, 2));
        assertFalse(s.settled(0.05, 4), "0.2 + 0.2 + 0.2 s so far");
        assertTrue(s.settled(0.025, 20), "past 1 s in all, still falling");
        assertEquals(1, new Settling().nextBatch(0.02), "an operation of 20 ms: one a batch");
        assertEquals(500, new Settling().nextBatch(10e-6));
        assertEquals(Settling.MAX_BATCH, new Settling().nextBatch(1e-12));
    }
}
