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
     * How much faster a server moves and reduces data than the 2-vCPU VM where {@link CostParameters#LOOPBACK_TCP}
     * was measured. Loopback TCP is memory copies in the kernel and ours on each side; the VM copies 2.3 GB/s on one
     * core, a server core several times that. 2.5 is the cautious end: an assumption, not a measurement, which
     * {@code HCCL_TOPO_PROBE} replaces with one.
     */
    public static final double SERVER_SPEEDUP = 2.5;

    /**
     * Loopback TCP on a server: the VM's figures ({@link CostParameters#LOOPBACK_TCP}) all divided by
     * {@link #SERVER_SPEEDUP}, so that on one node every algorithm's predicted time scales alike and the choices
     * measured on the VM stand: 4 µs per message, 3 GB/s per link, 7.5 GB/s reduction.
     */
    public static final CostParameters SERVER_LOOPBACK = new CostParameters(
        CostParameters.LOOPBACK_TCP.alpha() / SERVER_SPEEDUP,
        CostParameters.LOOPBACK_TCP.beta() / SERVER_SPEEDUP,
        CostParameters.LOOPBACK_TCP.gamma() / SERVER_SPEEDUP);

    /**
     * Shared memory within a server: the VM's figures ({@link CostParameters#VM_SHARED_MEMORY}) divided by
     * {@link #SERVER_SPEEDUP}, as for loopback: about 1.2 µs per message, 6 GB/s per link.
     */
    public static final CostParameters SERVER_SHARED_MEMORY = new CostParameters(
        CostParameters.VM_SHARED_MEMORY.alpha() / SERVER_SPEEDUP,
        CostParameters.VM_SHARED_MEMORY.beta() / SERVER_SPEEDUP,
        CostParameters.VM_SHARED_MEMORY.gamma() / SERVER_SPEEDUP);

    /**
     * A 10 Gbit/s Ethernet network through the kernel's TCP stack: about 30 µs per message (Open MPI's TCP latency
     * between hosts on such a network), 1.1 GB/s of payload; the reduction is the server's.
     */
    public static final CostParameters ETHERNET_10G = new CostParameters(30e-6, 1 / 1.1e9, SERVER_LOOPBACK.gamma());

    /**
     * A server's loopback TCP within a node, 10 Gbit/s Ethernet between nodes: a common cluster, whose nodes move data
     * within themselves several times faster than between them, as the hierarchical algorithms assume.
     */
    public static final LinkCosts DEFAULTS = new LinkCosts(SERVER_LOOPBACK, ETHERNET_10G, "defaults");

    /**
     * A server's shared memory within a node, 10 Gbit/s Ethernet between nodes: the defaults when the ranks of a node
     * talk through shared memory, which makes the level-0 phase of the hierarchy cheaper still.
     */
    public static final LinkCosts SHARED_MEMORY_DEFAULTS =
        new LinkCosts(SERVER_SHARED_MEMORY, ETHERNET_10G, "defaults (shared memory within nodes)");

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
