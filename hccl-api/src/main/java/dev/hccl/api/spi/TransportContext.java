package dev.hccl.api.spi;

import dev.hccl.api.CommConfig;

import java.net.InetAddress;
import java.util.Objects;

/**
 * What a transport is opened with: this rank, the job it belongs to, its configuration, where inbound messages go,
 * and the rendezvous store for agreeing on pairs.
 *
 * @param rank          this rank in the root communicator.
 * @param worldSize     the number of ranks.
 * @param commId        the root communicator's id.
 * @param jobToken      the job's shared secret (never sent as it is).
 * @param nodeId        this rank's node identity.
 * @param bindAddress   the address of the interface chosen for this rank, for transports that listen.
 * @param config        the configuration.
 * @param inbound       where messages from peers go.
 * @param bootstrap     the rendezvous store, usable until the transports are connected.
 */
public record TransportContext(
    int rank,
    int worldSize,
    long commId,
    String jobToken,
    String nodeId,
    InetAddress bindAddress,
    CommConfig config,
    Inbound inbound,
    Bootstrap bootstrap)
{
    /**
     * Checks the fields.
     */
    public TransportContext
    {
        if (worldSize < 1 || rank < 0 || rank >= worldSize)
        {
            throw new IllegalArgumentException("rank " + rank + " of " + worldSize);
        }
        Objects.requireNonNull(jobToken, "jobToken");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(inbound, "inbound");
        Objects.requireNonNull(bootstrap, "bootstrap");
    }
}
