package dev.hccl.api.spi;

/**
 * A peer as the rendezvous made it known to a transport: its rank, its node and the address its end of this
 * transport published.
 *
 * @param rank    the peer's rank in the root communicator.
 * @param nodeId  the peer's node identity; ranks with the same one share a machine (and its memory).
 * @param address the bytes the peer's end of this transport published ({@link Transport#localAddress()}), or null
 *                when the peer did not open this transport.
 */
public record PeerEndpoint(int rank, String nodeId, byte[] address)
{
}
