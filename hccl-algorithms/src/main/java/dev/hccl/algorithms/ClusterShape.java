package dev.hccl.algorithms;

import java.util.Arrays;

/**
 * What the cost model needs to know of a communicator's layout: how many ranks, on how many nodes, at most how many
 * on one node, and whether each node's ranks are consecutive.
 *
 * @param worldSize    ranks, at least 1.
 * @param nodes        nodes, 1 to {@code worldSize}.
 * @param ranksPerNode the most ranks any one node holds: how many may share one node's network link at once.
 * @param even         whether every node holds {@code ranksPerNode} ranks.
 * @param contiguous   whether each node's ranks are consecutive, so that a ring in rank order leaves each node once.
 */
public record ClusterShape(int worldSize, int nodes, int ranksPerNode, boolean even, boolean contiguous)
{
    /**
     * Validates.
     *
     * @param worldSize    ranks, at least 1.
     * @param nodes        1 to {@code worldSize}.
     * @param ranksPerNode {@code ceil(worldSize / nodes)} to {@code worldSize - nodes + 1}.
     * @param even         whether all nodes hold {@code ranksPerNode} ranks; then {@code nodes * ranksPerNode}
     *                     must be {@code worldSize}.
     * @param contiguous   whether each node's ranks are consecutive.
     */
    public ClusterShape
    {
        if (worldSize < 1 || nodes < 1 || nodes > worldSize || ranksPerNode < 1 ||
            (long)ranksPerNode * nodes < worldSize || ranksPerNode > worldSize - nodes + 1 ||
            (even && (long)ranksPerNode * nodes != worldSize))
        {
            throw new IllegalArgumentException("no layout of " + worldSize + " ranks on " + nodes + " nodes has " +
                (even ? "exactly " : "at most ") + ranksPerNode + " on a node");
        }
    }

    /**
     * All ranks on one node.
     *
     * @param worldSize ranks, at least 1.
     * @return the shape.
     */
    public static ClusterShape singleNode(final int worldSize)
    {
        return new ClusterShape(worldSize, 1, worldSize, true, true);
    }

    /**
     * The shape of a layout.
     *
     * @param nodeOfRank each rank's node, numbered 0 to nodes - 1 with no gaps, in any order.
     * @return the shape.
     */
    public static ClusterShape of(final int[] nodeOfRank)
    {
        if (nodeOfRank.length == 0)
        {
            throw new IllegalArgumentException("no ranks");
        }
        final int nodes = Arrays.stream(nodeOfRank).max().getAsInt() + 1;
        final int[] perNode = new int[nodes];
        boolean contiguous = true;
        for (int r = 0; r < nodeOfRank.length; r++)
        {
            if (nodeOfRank[r] < 0)
            {
                throw new IllegalArgumentException("rank " + r + " has node " + nodeOfRank[r]);
            }
            // Consecutive: a node, once left, is never seen again.
            if (r > 0 && nodeOfRank[r] != nodeOfRank[r - 1] && perNode[nodeOfRank[r]] > 0)
            {
                contiguous = false;
            }
            perNode[nodeOfRank[r]]++;
        }
        final int most = Arrays.stream(perNode).max().getAsInt();
        final int fewest = Arrays.stream(perNode).min().getAsInt();
        if (fewest == 0)
        {
            throw new IllegalArgumentException("node numbers have a gap: " + Arrays.toString(nodeOfRank));
        }
        return new ClusterShape(nodeOfRank.length, nodes, most, most == fewest, contiguous);
    }

    /**
     * For logs: {@code "2 nodes x 4 ranks"}, {@code "3 nodes, up to 3 ranks each"}.
     *
     * @return the shape in words.
     */
    @Override
    public String toString()
    {
        final String s = nodes == 1 ? "1 node x " + worldSize + (worldSize == 1 ? " rank" : " ranks") :
            even ? nodes + " nodes x " + ranksPerNode + (ranksPerNode == 1 ? " rank" : " ranks") :
            nodes + " nodes, up to " + ranksPerNode + " ranks each";
        return contiguous || nodes == 1 ? s : s + ", interleaved";
    }
}
