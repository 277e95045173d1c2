package dev.hccl.core.bootstrap;

import java.time.Duration;

/**
 * What one rendezvous store accepts: every resource a client drives has a bound. Connections that have proven the job
 * key and those still in the challenge are bounded apart, so that strangers, who can only ever hold the second kind,
 * never keep a rank out ({@link ChallengeSlots}).
 *
 * @param maxClients              connections that proved the key, at once; one more is told the store is full, and
 *                                tries again.
 * @param maxChallenges           connections in the challenge at once; a new one closes the oldest.
 * @param maxChallengesPerAddress connections in the challenge at once from one address; a new one closes that
 *                                address's oldest.
 * @param maxStoredBytes          keys and values held, in all.
 * @param handshakeMillis         how long a new connection may take to pass the whole challenge.
 * @param idleMillis              how long a client may stay silent between requests (a half-open one is closed then).
 * @param guessDelayMillis        the longest a wrong proof of the key waits for its answer ({@link GuessPacer}); 0
 *                                answers every one at once.
 */
public record StoreLimits(
    int maxClients, int maxChallenges, int maxChallengesPerAddress, long maxStoredBytes, int handshakeMillis,
    long idleMillis, long guessDelayMillis)
{
    /** Keys and values a store holds at most: a job's records are a few KiB a rank. */
    static final long MAX_STORED_BYTES = 64L << 20;
    /** A client's challenge takes two round trips; the whole of it must fit. */
    static final int HANDSHAKE_MILLIS = 3_000;
    /** A store started for a root info does not know the world size. */
    static final int ROOT_INFO_MAX_CLIENTS = 1024;
    /**
     * Connections in the challenge at once, at least: a thread each, for at most {@link #HANDSHAKE_MILLIS}. A job's
     * ranks connect together, so a large job gets as many as it may have clients.
     */
    static final int MIN_CHALLENGES = 256;
    /** Connections in the challenge at once from one address: the ranks of one host, and a quarter of the least. */
    static final int CHALLENGES_PER_ADDRESS = 64;

    /**
     * @param maxClients              at least 1.
     * @param maxChallenges           at least 1.
     * @param maxChallengesPerAddress at least 1.
     * @param maxStoredBytes          at least 1.
     * @param handshakeMillis         at least 1.
     * @param idleMillis              at least 1.
     * @param guessDelayMillis        at least 0, below {@code handshakeMillis}.
     */
    public StoreLimits
    {
        if (maxClients < 1 || maxChallenges < 1 || maxChallengesPerAddress < 1 || maxStoredBytes < 1 ||
            handshakeMillis < 1 || idleMillis < 1 || guessDelayMillis < 0 || guessDelayMillis >= handshakeMillis)
        {
            throw new IllegalArgumentException("store limits must be positive: " + maxClients + " clients, " +
                maxChallenges + " challenges, " + maxChallengesPerAddress + " from one address, " + maxStoredBytes +
                " bytes, " + handshakeMillis + " ms, " + idleMillis + " ms, guesses delayed " + guessDelayMillis + " ms");
        }
    }

    /**
     * The limits for a job's store.
     *
     * @param worldSize      ranks, or 0 when not known (a root info's store).
     * @param connectTimeout {@code HCCL_CONNECT_TIMEOUT}: a rank gives up its rendezvous after it, so a client silent
     *                       for longer is gone.
     * @return the limits.
     */
    public static StoreLimits forJob(final int worldSize, final Duration connectTimeout)
    {
        final int clients =
            worldSize <= 0 ? ROOT_INFO_MAX_CLIENTS : (int)Math.min(Integer.MAX_VALUE, 2L * worldSize + 16);
        return new StoreLimits(clients, Math.max(MIN_CHALLENGES, Math.min(clients, 4096)), CHALLENGES_PER_ADDRESS,
            MAX_STORED_BYTES, HANDSHAKE_MILLIS, connectTimeout.toMillis() + 10_000, GuessPacer.MAX_DELAY_MILLIS);
    }
}
