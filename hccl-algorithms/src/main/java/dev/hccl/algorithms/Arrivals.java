package dev.hccl.algorithms;

import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Request;

import java.util.ArrayList;

/**
 * Receives into consecutive byte ranges of one buffer, in ascending order, awaited progressively: a rank that
 * forwards what it receives (the tree scatter and gather) waits only for the ranges that cover the bytes it is about
 * to send, so forwarding starts while later segments still arrive.
 */
final class Arrivals
{
    private final ArrayList<Request> requests = new ArrayList<>();
    private final ArrayList<Integer> starts = new ArrayList<>();
    private int awaited;

    /**
     * Adds a receive; receives must be added in ascending order of their first byte.
     */
    void add(final Request request, final int start)
    {
        requests.add(request);
        starts.add(start);
    }

    /**
     * Awaits every receive that starts before byte {@code end}.
     */
    void awaitBefore(final PeerGroup group, final int end)
    {
        while (awaited < requests.size() && starts.get(awaited) < end)
        {
            group.await(requests.get(awaited++));
        }
    }

    void awaitAll(final PeerGroup group)
    {
        awaitBefore(group, Integer.MAX_VALUE);
    }
}
