package dev.hccl.core.bootstrap;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The wait before a wrong proof's answer grows with an address's wrong proofs in a minute, and for it alone. */
class GuessPacerTest
{
    @Test
    void eachGuessBeyondTheFreeOnesWaitsLongerUpToTheCap() throws Exception
    {
        final GuessPacer pacer = new GuessPacer(GuessPacer.MAX_DELAY_MILLIS);
        final InetAddress stranger = InetAddress.getByAddress(new byte[] { 10, 0, 0, 9 });
        final InetAddress rank = InetAddress.getByAddress(new byte[] { 10, 0, 0, 2 });
        final long t = 1_000_000_000_000L;
        for (int i = 1; i <= GuessPacer.FREE_GUESSES; i++)
        {
            assertEquals(0, pacer.failed(stranger, t + i), "guess " + i);
        }
        assertEquals(250, pacer.failed(stranger, t + 10));
        assertEquals(500, pacer.failed(stranger, t + 11));
        for (int i = 0; i < 10; i++)
        {
            pacer.failed(stranger, t + 12 + i);
        }
        assertEquals(GuessPacer.MAX_DELAY_MILLIS, pacer.failed(stranger, t + 30));
        assertEquals(0, pacer.failed(rank, t + 31), "another address");
        assertEquals(0, pacer.failed(stranger, t + 61_000_000_000L), "a minute later");
    }
}
