package dev.hccl.algorithms;

/**
 * The two classes of link the cost model tells apart, as HCCL's level0 and level1: between ranks of one node and
 * between nodes. They come from a measurement at communicator creation ({@code HCCL_TOPO_PROBE}) or are the defaults.
 *
 * @param local   links within a node.
 * @param network links between nodes: one per node, which the node's ranks share when they send at once.
 * @param source  where the figures come from, for logs: {@code "defaults"} or {@code "measured"}.
 */
public record LinkCosts(CostParameters local, CostParameters network, String source)
{
    /**
     * A 10 Gbit/s Ethernet network through the kernel's TCP stack: about 30 µs per message (Open MPI's TCP latency
     * between hosts on such a network), 1.1 GB/s of payload.
     */
    public static final CostParameters ETHERNET_10G =
        new CostParameters(30e-6, 1 / 1.1e9, CostParameters.LOOPBACK_TCP.gamma());

    /** Loopback TCP within a node, 10 Gbit/s Ethernet between nodes. */
    public static final LinkCosts DEFAULTS = new LinkCosts(CostParameters.LOOPBACK_TCP, ETHERNET_10G, "defaults");

    /**
     * Validates.
     *
     * @param local   not null.
     * @param network not null.
     * @param source  not null.
     */
    public LinkCosts
    {
        if (local == null || network == null || source == null)
        {
            throw new IllegalArgumentException("local, network and source must not be null");
        }
    }

    /**
     * For logs: {@code "measured: local 10.0 us per message, 1.20 GB/s, ...; network ..."}.
     *
     * @return the figures in the units people quote.
     */
    @Override
    public String toString()
    {
        return source + ": local " + local + "; network " + network;
    }
}
