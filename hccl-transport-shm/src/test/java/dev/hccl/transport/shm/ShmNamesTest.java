package dev.hccl.transport.shm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The segments' names: the same on both ranks of a pair, different for every job, communicator and pair, and telling
 * nothing of the communicator id to whoever lists the directory.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmNamesTest
{
    private static final long COMM_ID = 0x5EED_CAFEL;

    @Test
    void bothRanksOfAPairComputeTheSameName()
    {
        assertEquals(new ShmNames("job-token", COMM_ID).fileName(0, 1),
            new ShmNames("job-token", COMM_ID).fileName(0, 1));
    }

    @Test
    void jobsWithDifferentTokensGetDifferentNamesForTheSameCommunicatorAndPair()
    {
        assertNotEquals(new ShmNames("token-a", COMM_ID).fileName(0, 1),
            new ShmNames("token-b", COMM_ID).fileName(0, 1));
        // A job without a token of its own gets a random one from rank 0, but an empty one must not collide either.
        assertNotEquals(new ShmNames("", COMM_ID).fileName(0, 1), new ShmNames("token-a", COMM_ID).fileName(0, 1));
    }

    @Test
    void namesHide128BitsAndNeitherTheCommunicatorIdNorTheRanks()
    {
        final String name = new ShmNames("job-token", COMM_ID).fileName(3, 17);
        assertTrue(name.matches("hccl-[0-9a-f]{32}"), name);
        final String hash = name.substring(ShmNames.PREFIX.length());
        assertFalse(hash.contains(Long.toHexString(COMM_ID)), name);
        assertFalse(hash.contains(Long.toString(COMM_ID)), name);
        assertFalse(name.endsWith("-3-17"), name);
    }

    @Test
    void everyPairAndCommunicatorHasItsOwnName()
    {
        final Set<String> seen = new HashSet<>();
        final ShmNames one = new ShmNames("job-token", COMM_ID);
        final ShmNames other = new ShmNames("job-token", COMM_ID + 1);
        for (int hi = 1; hi < 16; hi++)
        {
            for (int lo = 0; lo < hi; lo++)
            {
                assertTrue(seen.add(one.fileName(lo, hi)), "pair " + lo + "-" + hi + " named twice");
                assertTrue(seen.add(other.fileName(lo, hi)), "pair " + lo + "-" + hi + " of another communicator");
            }
        }
    }
}
