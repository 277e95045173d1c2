package dev.hccl.api;

import java.util.List;

/**
 * Which ranks of a communicator share a node, as learnt at creation.
 */
public interface Topology
{
    /**
     * Number of ranks.
     *
     * @return the world size.
     */
    int worldSize();

    /**
     * Number of distinct nodes.
     *
     * @return at least 1.
     */
    int nodeCount();

    /**
     * The node a rank runs on.
     *
     * @param rank a rank.
     * @return the node's index, 0 to {@link #nodeCount()} - 1, in order of each node's lowest rank.
     */
    int nodeOf(int rank);

    /**
     * The ranks on a node.
     *
     * @param node a node index.
     * @return the ranks, ascending.
     */
    List<Integer> ranksOnNode(int node);

    /**
     * A rank's index among the ranks of its node.
     *
     * @param rank a rank.
     * @return the local rank.
     */
    int localRank(int rank);

    /**
     * The identity of a node: host name, boot id and network namespace, or the override given.
     *
     * @param node a node index.
     * @return the node's identity string.
     */
    String nodeId(int node);

    /**
     * The host name of a node.
     *
     * @param node a node index.
     * @return the host name its ranks reported.
     */
    String hostName(int node);
}
