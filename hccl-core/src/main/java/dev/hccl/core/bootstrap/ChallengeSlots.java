package dev.hccl.core.bootstrap;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The connections in the store's challenge, apart from those admitted: a stranger, who cannot prove the job key, can
 * only ever hold these, never keep a rank out of the admitted ones. They are bounded in all and from one address; a new
 * connection is always taken in, and when the bound is reached the oldest is closed to make room: the oldest of its own
 * address when that address holds its share, else the oldest of the address that holds the most. A stranger who keeps
 * opening connections that never prove the key (each held until its deadline, and reopened) so closes its own, while
 * a rank, whose challenge takes two round trips, passes it long before as many newer connections arrive; one closed
 * anyway tries again. Thread-safe.
 */
final class ChallengeSlots
{
    /** Oldest first. */
    private final LinkedHashMap<Challenge, InetAddress> inChallenge = new LinkedHashMap<>();
    private final Map<InetAddress, Integer> byAddress = new HashMap<>();
    private long cut;
    private String lastCut;

    /**
     * Takes a new connection in.
     *
     * @param challenge  the new connection.
     * @param total      how many may be in the challenge at once.
     * @param perAddress how many of them from one address.
     * @return the connection to cut to make room for it (the caller cuts it), or null when there was room.
     */
    synchronized Challenge enter(final Challenge challenge, final int total, final int perAddress)
    {
        final InetAddress address = challenge.address();
        Challenge oldest = null;
        if (count(address) >= perAddress)
        {
            oldest = oldestOf(address);
        }
        else if (inChallenge.size() >= total)
        {
            oldest = oldestOf(busiest());
        }
        if (oldest != null)
        {
            leave(oldest);
            cut++;
            lastCut = oldest.address().getHostAddress();
        }
        inChallenge.put(challenge, address);
        byAddress.merge(address, 1, Integer::sum);
        return oldest;
    }

    /**
     * A connection leaves the challenge: it proved the key, failed, or was cut. Idempotent.
     *
     * @param challenge the connection.
     */
    synchronized void leave(final Challenge challenge)
    {
        final InetAddress address = inChallenge.remove(challenge);
        if (address != null)
        {
            byAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
        }
    }

    /**
     * Connections in the challenge now.
     *
     * @return how many.
     */
    synchronized int size()
    {
        return inChallenge.size();
    }

    /**
     * What was cut to make room, for the ranks' message when some did not arrive.
     *
     * @return how many connections and the last one's address, or null when none was.
     */
    synchronized String cutSoFar()
    {
        return cut == 0 ? null : cut + " connection" + (cut == 1 ? "" : "s") + " that had not proven the job token " +
            "(the last from " + lastCut + ")";
    }

    private int count(final InetAddress address)
    {
        return byAddress.getOrDefault(address, 0);
    }

    private InetAddress busiest()
    {
        InetAddress busiest = null;
        int most = 0;
        for (final Map.Entry<InetAddress, Integer> e : byAddress.entrySet())
        {
            if (e.getValue() > most)
            {
                most = e.getValue();
                busiest = e.getKey();
            }
        }
        return busiest;
    }

    private Challenge oldestOf(final InetAddress address)
    {
        final Iterator<Map.Entry<Challenge, InetAddress>> it = inChallenge.entrySet().iterator();
        while (it.hasNext())
        {
            final Map.Entry<Challenge, InetAddress> e = it.next();
            if (e.getValue().equals(address))
            {
                return e.getKey();
            }
        }
        return null;
    }
}
