package dev.hccl.core.transport;

import dev.hccl.api.spi.Inbound;

/**
 * Joins the ranks of one process: each rank registers its {@link Inbound}, and a {@link InProcessTransport} delivers
 * into the receiver's inbound directly, on the sender's thread.
 */
public final class InProcessHub
{
    private final Inbound[] inbounds;

    /**
     * A hub for {@code worldSize} ranks.
     *
     * @param worldSize ranks.
     */
    public InProcessHub(final int worldSize)
    {
        inbounds = new Inbound[worldSize];
    }

    /**
     * Registers a rank; must happen for every rank before any sends.
     *
     * @param rank    the rank.
     * @param inbound where its messages go.
     * @return this rank's transport.
     */
    public synchronized InProcessTransport register(final int rank, final Inbound inbound)
    {
        inbounds[rank] = inbound;
        return new InProcessTransport(this, rank);
    }

    synchronized Inbound inbound(final int rank)
    {
        return inbounds[rank];
    }

    int worldSize()
    {
        return inbounds.length;
    }
}
