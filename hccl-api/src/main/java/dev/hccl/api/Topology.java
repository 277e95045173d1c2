package dev.hccl.api;

/**
 * Where the ranks of a communicator run, as learnt at creation: which share a node, and what each node is.
 */
public interface Topology
{
    /**
     * Which node each rank runs on.
     *
     * @return the layout; nodes are numbered in order of their lowest ranks.
     */
    RankLayout layout();

    /**
     * The identity of a node: host name, boot id and network namespace, or the override given.
     *
     * @param node a node of {@link #layout()}.
     * @return the node's identity string.
     */
    String nodeId(int node);

    /**
     * The host name of a node.
     *
     * @param node a node of {@link #layout()}.
     * @return the host name its ranks reported.
     */
    String hostName(int node);
}
