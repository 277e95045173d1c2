package dev.hccl.bench;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * When the warm-up of a size stops: once the time neither falls nor jumps about, the JIT is quiet and the least time
 * passed, or at its budget.
 */
class SettlingTest
{
    @Test
    void aTimeThatStillFallsIsNotSettledAndOneThatStoppedFallingIs()
    {
        final Settling s = new Settling();
        assertFalse(s.settled(300e-6, 1, true), "the first operation only sizes the batches");
        assertFalse(s.settled(60e-6, 1000, false), "0.06 s");
        assertFalse(s.settled(30e-6, 1000, false), "half the time: still falling");
        assertFalse(s.settled(20e-6, 2000, false), "a third less: still falling");
        assertFalse(s.settled(19e-6, 2000, false), "5 % less: quiet once");
        assertFalse(s.settled(21e-6, 2000, false), "no faster: quiet twice");
        assertTrue(s.settled(20e-6, 2000, false), "quiet three times, 0.22 s in all");
    }

    @Test
    void aQuietTimeBeforeTheLeastWarmUpIsNotSettledAndAFallStartsTheCountAgain()
    {
        final Settling s = new Settling();
        s.settled(100e-6, 1, true);
        assertFalse(s.settled(50e-6, 100, false));
        assertFalse(s.settled(50e-6, 100, false));
        assertFalse(s.settled(50e-6, 100, false));
        assertFalse(s.settled(50e-6, 100, false), 
            "quiet four times, but only 0.02 s: a plateau before the JIT's second pass");
        assertFalse(s.settled(20e-6, 5000, false), "the optimised path: far faster, the count starts again");
        assertFalse(s.settled(20e-6, 5000, false), "quiet once");
        assertFalse(s.settled(20.5e-6, 5000, false), "quiet twice");
        assertTrue(s.settled(20e-6, 5000, false), "quiet three times, 0.42 s in all");
    }

    @Test
    void aTimeThatJumpsAboutAboveTheBestIsNotSettled()
    {
        final Settling s = new Settling();
        s.settled(1e-3, 1, true);
        assertFalse(s.settled(20e-6, 10_000, false), "0.2 s: the best so far");
        assertFalse(s.settled(90e-6, 1_000, false), "4.5x the best: no faster, but not steady either");
        assertFalse(s.settled(300e-6, 100, false));
        assertFalse(s.settled(60e-6, 1_000, false));
        assertFalse(s.settled(25e-6, 5_000, false), "within 50 % of the best: quiet once");
        assertFalse(s.settled(80e-6, 1_000, false), "a jump: the count starts again");
        assertFalse(s.settled(22e-6, 5_000, false), "quiet once");
        assertFalse(s.settled(28e-6, 5_000, false), "quiet twice");
        assertTrue(s.settled(21e-6, 5_000, false), "quiet three times");
    }

    @Test
    void aBatchDuringWhichTheJitCompiledIsNotQuiet()
    {
        final Settling s = new Settling();
        s.settled(1e-3, 1, true);
        assertFalse(s.settled(20e-6, 10_000, false));
        assertFalse(s.settled(20e-6, 10_000, false), "quiet once");
        assertFalse(s.settled(20e-6, 10_000, true), 
            "the same time, but the code it runs may change: the count starts again");
        assertFalse(s.settled(20e-6, 10_000, false), "quiet once");
        assertFalse(s.settled(20e-6, 10_000, false), "quiet twice");
        assertTrue(s.settled(20e-6, 10_000, false), "quiet three times");
    }

    @Test
    void theBudgetEndsAWarmUpThatNeverSettlesAndABatchLastsAboutTenMilliseconds()
    {
        final Settling s = new Settling();
        s.settled(0.2, 1, true);
        assertFalse(s.settled(0.1, 2, true));
        assertFalse(s.settled(0.05, 4, true), "0.2 + 0.2 + 0.2 s so far");
        assertFalse(s.settled(0.025, 80, true), "2.6 s");
        assertTrue(s.settled(0.025, 20, true), "past 3 s in all, still falling and compiling");
        assertEquals(1, new Settling().nextBatch(0.02), "an operation of 20 ms: one a batch");
        assertEquals(1000, new Settling().nextBatch(10e-6));
        assertEquals(Settling.MAX_BATCH, new Settling().nextBatch(1e-12));
    }

    /**
     * On Linux the compiler threads' run time is read while they compile: a JVM made to compile a method of many
     * branches shows it growing, before the compilation has finished.
     */
    @Test
    void theJitsWorkIsCountedWhileItCompiles()
    {
        final JitActivity.Reading before = JitActivity.read();
        if (Files.isDirectory(Path.of("/proc/self/task")))
        {
            assertNotNull(JitActivity.compilerThreads(), "HotSpot's compiler threads are found by their names");
        }
        long sink = 0;
        for (int i = 0; i < 200_000; i++)
        {
            sink += work(i);
        }
        assertTrue(sink != 1, "the work is used");
        assertTrue(before.workUntil(JitActivity.read()) > 0,
            "compiling work() and this loop took the JIT's threads some time");
    }

    private static long work(final int i)
    {
        return Long.rotateLeft(i * 0x9E3779B97F4A7C15L, i & 63) ^ (i % 7 == 0 ? i >>> 3 : ~i);
    }
}
