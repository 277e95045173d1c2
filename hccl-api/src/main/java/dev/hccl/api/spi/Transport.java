package dev.hccl.api.spi;

import java.util.List;
import java.util.Set;

/**
 * This rank's end of one transport: links to the peers of the root communicator that the communicator chose it for.
 * <p>
 * Life: a {@link TransportProvider} opens it; its {@link #localAddress()} is published through the rendezvous; the
 * communicator asks {@link #canConnect} for every peer and {@link #connect}s the transport to the peers it chose it
 * for; then {@link #link} serves them until {@link #close()}.
 */
public interface Transport extends AutoCloseable
{
    /**
     * A short name for logs: {@code tcp}, {@code inproc}, ...
     *
     * @return the name.
     */
    String name();

    /**
     * What the peers need to reach this end, published through the rendezvous as it is: opaque to everything but
     * this transport's other ends.
     *
     * @return the bytes; empty when the peers need nothing.
     */
    default byte[] localAddress()
    {
        return new byte[0];
    }

    /**
     * Whether this transport can connect this rank with a peer. Both ranks of a pair must come to the same answer
     * from what they both know (the two endpoints), so it must be symmetric.
     *
     * @param self this rank's endpoint.
     * @param peer the peer's endpoint.
     * @return true when the pair can try this transport.
     */
    default boolean canConnect(final PeerEndpoint self, final PeerEndpoint peer)
    {
        return peer.address() != null;
    }

    /**
     * Connects to the peers the communicator chose this transport for, at most once. A pair that cannot be connected
     * after all (a segment that does not fit) is left out of the result, on both of its ranks alike, and falls to the
     * next transport; a failure that must fail the rank (a peer that never answers) throws.
     *
     * @param self          this rank's endpoint.
     * @param peers         the peers, each with {@link #canConnect} true.
     * @param deadlineNanos when to give up, as {@link System#nanoTime()}.
     * @return the ranks connected.
     */
    Set<Integer> connect(PeerEndpoint self, List<PeerEndpoint> peers, long deadlineNanos);

    /**
     * The link to a peer.
     *
     * @param peer the peer's rank in the root communicator, one that {@link #connect} connected.
     * @return the link.
     */
    Link link(int peer);

    /**
     * How this transport's I/O is driven.
     *
     * @return the engine that the threads waiting for transfers must drive, or null when the transport completes
     * transfers on threads of its own.
     */
    default ProgressEngine progressEngine()
    {
        return null;
    }

    /**
     * The memory this transport shares among this rank and the peers it connected on this node, for the collectives
     * of the root communicator within the node: asked once, after {@link #connect}. Every member of an arena gets
     * the same answer (members in ascending rank order, the same region size), or every member gets null: the
     * transport agrees on it with the members, so that no rank runs a collective through the arena while another
     * passes messages. The transport unmaps it at {@link #close()}.
     *
     * @return the arena, its ranks being the root communicator's; null when this transport has none (the default).
     */
    default NodeArena nodeArena()
    {
        return null;
    }

    /**
     * Closes every link. Idempotent.
     */
    @Override
    void close();
}
