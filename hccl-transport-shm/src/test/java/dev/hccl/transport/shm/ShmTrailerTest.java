package dev.hccl.transport.shm;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a ring's trailer may hold, judged from values alone.
 */
class ShmTrailerTest
{
    private static final int CAPACITY = 4096;
    private static final long NOW = 1_700_000_000_000L;
    private static final long STARTED = NOW - 3_600_000;

    @Test
    void positionsThatTheRingCanHoldPass()
    {
        assertNull(ShmTrailer.positionsProblem(0, 0, 0, CAPACITY));
        assertNull(ShmTrailer.positionsProblem(800, 800 + CAPACITY, 800, CAPACITY), "a full ring");
        // The consumer moved on between the reads: the later head is past the tail read before it.
        assertNull(ShmTrailer.positionsProblem(1 << 30, (1 << 30) + 64, (1 << 30) + 128, CAPACITY));
    }

    @Test
    void positionsThatTheRingCannotHoldNameTheFieldAndValue()
    {
        assertTrue(ShmTrailer.positionsProblem(-8, 0, -8, CAPACITY).startsWith("a head position of -8"));
        assertTrue(ShmTrailer.positionsProblem(12, 16, 12, CAPACITY).startsWith("a head position of 12"));
        assertTrue(ShmTrailer.positionsProblem(0, 13, 0, CAPACITY).startsWith("a tail position of 13"));
        assertTrue(ShmTrailer.positionsProblem(64, 8, 64, CAPACITY).contains("past the tail position 8"));
        assertTrue(ShmTrailer.positionsProblem(0, CAPACITY + 8, 0, CAPACITY).contains("more written than"));
    }

    @Test
    void heartbeatsTheWriterCanHaveWrittenPass()
    {
        assertNull(ShmTrailer.heartbeatProblem(NOW - 500, NOW, STARTED));
        assertNull(ShmTrailer.heartbeatProblem(NOW - 10 * 60_000, NOW, STARTED), "old, but a frozen peer's");
        assertNull(ShmTrailer.heartbeatProblem(NOW + 30, NOW, STARTED), "written after this rank read the clock");
        assertNull(ShmTrailer.heartbeatProblem(STARTED - 1000, NOW, STARTED), "a start time known to a second");
        assertNull(ShmTrailer.heartbeatProblem(1000, NOW, 0), "no start time: only a positive time is asked");
    }

    @Test
    void heartbeatsTheWriterCannotHaveWrittenNameTheFieldAndValue()
    {
        assertTrue(ShmTrailer.heartbeatProblem(0, NOW, STARTED).startsWith("a consumer heartbeat of 0"));
        assertTrue(ShmTrailer.heartbeatProblem(-5, NOW, 0).startsWith("a consumer heartbeat of -5"));
        assertTrue(ShmTrailer.heartbeatProblem(Long.MAX_VALUE, NOW, STARTED).contains("in the future"));
        assertTrue(ShmTrailer.heartbeatProblem(NOW + 3_600_000, NOW, STARTED).contains("3600000 ms in the future"));
        assertTrue(ShmTrailer.heartbeatProblem(1000, NOW, STARTED).contains("before its writer's process started"));
    }
}
