package dev.hccl.algorithms;

import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Request;

import java.util.ArrayList;

/**
 * The sends an algorithm has in flight, awaited together before the operation returns (a send's buffer belongs to
 * the transport until then).
 */
final class Requests
{
    private final ArrayList<Request> pending = new ArrayList<>();

    void add(final Request request)
    {
        pending.add(request);
    }

    void awaitAll(final PeerGroup group)
    {
        for (int i = 0, n = pending.size(); i < n; i++)
        {
            group.await(pending.get(i));
        }
        pending.clear();
    }

    static void awaitAll(final PeerGroup group, final Request[] requests)
    {
        for (final Request request : requests)
        {
            group.await(request);
        }
    }
}
