package dev.hccl.algorithms.kernel;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The trial's verdict from timings: the vector loop must take at most {@link VectorLoopTrial#COMPILED_RATIO} times the
 * scalar kernel's time a byte in {@link VectorLoopTrial#WINS} timed calls in a row; one split call in
 * {@link VectorLoopTrial#TIMED_EVERY} is timed, the others feed the loop.
 */
class VectorLoopTrialTest
{
    /** Bytes of a split call's scalar part in these timings. */
    private static final long REST = 60 * 1024;

    @Test
    void aVectorLoopFasterAByteInEnoughCallsInARowEndsTheTrial()
    {
        final VectorLoopTrial trial = new VectorLoopTrial("FP32 SUM");
        for (int win = 1; win < VectorLoopTrial.WINS; win++)
        {
            win(trial);
            assertFalse(trial.proven(), "after " + win + " wins");
        }
        win(trial);
        assertTrue(trial.proven());
        trial.record(1_000_000, VectorLoopTrial.TRIAL_BYTES, 3_000, REST);
        assertTrue(trial.proven(), "a trial once proven stays so");
    }

    @Test
    void aSlowerCallStartsTheCountAgain()
    {
        final VectorLoopTrial trial = new VectorLoopTrial("FP32 SUM");
        for (int win = 1; win < VectorLoopTrial.WINS; win++)
        {
            win(trial);
        }
        // An interpreted vector loop: 4 KiB in 1 ms against 60 KiB in 3 us.
        trial.record(1_000_000, VectorLoopTrial.TRIAL_BYTES, 3_000, REST);
        for (int win = 1; win < VectorLoopTrial.WINS; win++)
        {
            win(trial);
            assertFalse(trial.proven(), "after a loss and " + win + " wins");
        }
        win(trial);
        assertTrue(trial.proven());
    }

    @Test
    void timesArePerByte()
    {
        final VectorLoopTrial trial = new VectorLoopTrial("FP32 SUM");
        // Less time in all, but five times as much a byte: 4 KiB in 1 us against 60 KiB in 3 us.
        for (int call = 0; call < 2 * VectorLoopTrial.WINS; call++)
        {
            trial.record(1_000, VectorLoopTrial.TRIAL_BYTES, 3_000, REST);
        }
        assertFalse(trial.proven());
    }

    @Test
    void aVectorLoopWithinTheRatioPassesForCompiledAndOneBeyondItDoesNot()
    {
        // Per byte: the scalar kernel 3,000 ns for 60 KiB; the vector loop just within and just beyond the ratio.
        final long within = (long)(0.95 * VectorLoopTrial.COMPILED_RATIO * 3_000 * VectorLoopTrial.TRIAL_BYTES / REST);
        final long beyond = (long)(1.05 * VectorLoopTrial.COMPILED_RATIO * 3_000 * VectorLoopTrial.TRIAL_BYTES / REST);
        final VectorLoopTrial slow = new VectorLoopTrial("FP32 SUM");
        for (int call = 0; call < 2 * VectorLoopTrial.WINS; call++)
        {
            slow.record(beyond, VectorLoopTrial.TRIAL_BYTES, 3_000, REST);
        }
        assertFalse(slow.proven());
        final VectorLoopTrial compiled = new VectorLoopTrial("FP32 SUM");
        for (int call = 0; call < VectorLoopTrial.WINS; call++)
        {
            compiled.record(within, VectorLoopTrial.TRIAL_BYTES, 3_000, REST);
        }
        assertTrue(compiled.proven());
    }

    @Test
    void oneSplitCallInSoManyIsTimedAndTheOthersFeedTheLoop()
    {
        final VectorLoopTrial trial = new VectorLoopTrial("FP32 SUM");
        int timed = 0;
        for (int call = 1; call <= 4 * VectorLoopTrial.TIMED_EVERY; call++)
        {
            final int bytes = trial.vectorBytes();
            assertEquals(call % VectorLoopTrial.TIMED_EVERY == 0 ? VectorLoopTrial.TRIAL_BYTES :
                VectorLoopTrial.FEED_BYTES, bytes, "call " + call);
            timed += bytes == VectorLoopTrial.TRIAL_BYTES ? 1 : 0;
        }
        assertEquals(4, timed);
    }

    /** Records a timed call of a compiled vector loop: 4 KiB in 100 ns against the scalar kernel's 60 KiB in 3 us. */
    private static void win(final VectorLoopTrial trial)
    {
        trial.record(100, VectorLoopTrial.TRIAL_BYTES, 3_000, REST);
    }
}
