package dev.hccl.core.bootstrap;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long the store waits before it tells a client that its proof of the job key is wrong, by the client's address:
 * a rank with another token hears at once, the first few times a minute, while a stranger guessing tokens waits longer
 * for every further answer, so that one address learns at most a few dozen answers a second however many connections
 * it opens (each waits in the challenge, and closing it early learns nothing). Thread-safe; it remembers a bounded
 * number of addresses.
 */
final class GuessPacer
{
    /** Wrong proofs an address may make in a window and hear of at once. */
    static final int FREE_GUESSES = 3;
    /** How much longer each further answer waits, up to the cap. */
    static final long DELAY_STEP_MILLIS = 250;
    /**
     * A job store's cap: below the challenge's deadline ({@link StoreLimits#HANDSHAKE_MILLIS}), so that the answer
     * still goes out.
     */
    static final long MAX_DELAY_MILLIS = 2_000;
    private static final long WINDOW_NANOS = 60_000_000_000L;
    /** Addresses remembered at most; beyond, all are forgotten (a stranger with that many addresses is not slowed). */
    private static final int MAX_ADDRESSES = 4096;

    private final ConcurrentHashMap<InetAddress, long[]> failures = new ConcurrentHashMap<>();
    private final long maxDelayMillis;

    /**
     * @param maxDelayMillis the longest an answer waits ({@link StoreLimits#guessDelayMillis()}); 0 for none.
     */
    GuessPacer(final long maxDelayMillis)
    {
        this.maxDelayMillis = maxDelayMillis;
    }

    /**
     * Counts a wrong proof from an address.
     *
     * @param address  the client's address.
     * @param nowNanos {@link System#nanoTime()}.
     * @return how long to wait before the answer, in milliseconds.
     */
    long failed(final InetAddress address, final long nowNanos)
    {
        if (failures.size() >= MAX_ADDRESSES)
        {
            failures.clear();
        }
        // {count in the window, the window's start}
        final long[] seen = failures.compute(address, (a, was) ->
            null == was || nowNanos - was[1] > WINDOW_NANOS ? new long[] { 1, nowNanos } :
                new long[] { was[0] + 1, was[1] });
        return Math.min(maxDelayMillis, Math.max(0, seen[0] - FREE_GUESSES) * DELAY_STEP_MILLIS);
    }
}
