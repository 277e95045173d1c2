package dev.hccl.api.spi;

/**
 * A set of links from this rank to every other rank of the root communicator.
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
     * The link to a peer.
     *
     * @param peer the peer's rank in the root communicator, not this rank.
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
     * Closes every link. Idempotent.
     */
    @Override
    void close();
}
