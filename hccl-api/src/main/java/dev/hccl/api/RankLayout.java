package dev.hccl.api;

import java.util.Arrays;
import java.util.function.IntUnaryOperator;

/**
 * Which node each rank of a group runs on: the one model of where ranks live, used by the topology, the cost model
 * and the hierarchical schedules alike. Immutable.
 * <p>
 * Nodes are numbered from 0 in order of their lowest ranks, and each node's ranks are in rank order, so that local
 * rank {@code j} of node {@code i} is the same rank in every rank's copy. A node's ranks need not be consecutive.
 */
public final class RankLayout
{
    /** The ranks of each node, in rank order; nodes in order of their lowest ranks. */
    private final int[][] ranksOfNode;
    private final int[] nodeOfRank;
    private final int[] localOfRank;
    private final int mostPerNode;
    private final boolean even;
    private final boolean contiguous;

    private RankLayout(final int[] nodeOfRank, final int[] localOfRank, final int[][] ranksOfNode)
    {
        this.nodeOfRank = nodeOfRank;
        this.localOfRank = localOfRank;
        this.ranksOfNode = ranksOfNode;
        int most = 0;
        int fewest = Integer.MAX_VALUE;
        for (final int[] node : ranksOfNode)
        {
            most = Math.max(most, node.length);
            fewest = Math.min(fewest, node.length);
        }
        this.mostPerNode = most;
        this.even = most == fewest;
        boolean consecutive = true;
        for (final int[] node : ranksOfNode)
        {
            consecutive &= node[node.length - 1] - node[0] == node.length - 1;
        }
        this.contiguous = consecutive;
    }

    /**
     * The layout of ranks from each rank's node key.
     *
     * @param size      ranks, at least 1.
     * @param nodeKeyOf each rank's node as any number; ranks with equal keys share a node.
     * @return the layout.
     */
    public static RankLayout of(final int size, final IntUnaryOperator nodeKeyOf)
    {
        if (size < 1)
        {
            throw new IllegalArgumentException("a layout needs at least one rank, got " + size);
        }
        // Keys by dense index in order of first appearance (each node's lowest rank): small int arrays, no boxing.
        final int[] keys = new int[size];
        final int[] sizes = new int[size];
        final int[] nodeOf = new int[size];
        final int[] localOf = new int[size];
        int count = 0;
        for (int r = 0; r < size; r++)
        {
            final int key = nodeKeyOf.applyAsInt(r);
            int index = 0;
            while (index < count && keys[index] != key)
            {
                index++;
            }
            if (index == count)
            {
                keys[count++] = key;
            }
            nodeOf[r] = index;
            localOf[r] = sizes[index]++;
        }
        final int[][] nodes = new int[count][];
        for (int i = 0; i < count; i++)
        {
            nodes[i] = new int[sizes[i]];
        }
        for (int r = 0; r < size; r++)
        {
            nodes[nodeOf[r]][localOf[r]] = r;
        }
        return new RankLayout(nodeOf, localOf, nodes);
    }

    /**
     * The layout of ranks from each rank's node key.
     *
     * @param nodeKeyOfRank each rank's node as any number; ranks with equal keys share a node.
     * @return the layout.
     */
    public static RankLayout ofNodes(final int... nodeKeyOfRank)
    {
        final int[] keys = nodeKeyOfRank.clone();
        return of(keys.length, r -> keys[r]);
    }

    /**
     * All ranks on one node.
     *
     * @param worldSize ranks, at least 1.
     * @return the layout.
     */
    public static RankLayout singleNode(final int worldSize)
    {
        return of(worldSize, r -> 0);
    }

    /**
     * {@code nodes} nodes of {@code ranksPerNode} consecutive ranks each, as launchers place them.
     *
     * @param nodes        at least 1.
     * @param ranksPerNode at least 1.
     * @return the layout.
     */
    public static RankLayout blocks(final int nodes, final int ranksPerNode)
    {
        if (nodes < 1 || ranksPerNode < 1)
        {
            throw new IllegalArgumentException("blocks need at least one node of one rank, got " + nodes + " x " +
                ranksPerNode);
        }
        return of(Math.multiplyExact(nodes, ranksPerNode), r -> r / ranksPerNode);
    }

    /** @return the number of ranks. */
    public int worldSize()
    {
        return nodeOfRank.length;
    }

    /** @return the number of nodes, at least 1. */
    public int nodeCount()
    {
        return ranksOfNode.length;
    }

    /**
     * @param rank a rank.
     * @return its node, 0 to {@link #nodeCount()} - 1.
     */
    public int nodeOf(final int rank)
    {
        return nodeOfRank[rank];
    }

    /**
     * @param rank a rank.
     * @return its index among the ranks of its node.
     */
    public int localRank(final int rank)
    {
        return localOfRank[rank];
    }

    /**
     * @param node a node.
     * @return its ranks, ascending; a copy.
     */
    public int[] ranksOn(final int node)
    {
        return ranksOfNode[node].clone();
    }

    /**
     * @param node a node.
     * @return how many ranks it holds.
     */
    public int sizeOf(final int node)
    {
        return ranksOfNode[node].length;
    }

    /** @return the most ranks any node holds: how many may share one node's network link at once. */
    public int mostPerNode()
    {
        return mostPerNode;
    }

    /** @return whether every node holds {@link #mostPerNode()} ranks. */
    public boolean even()
    {
        return even;
    }

    /** @return whether each node's ranks are consecutive, so that a ring in rank order leaves each node once. */
    public boolean contiguous()
    {
        return contiguous;
    }

    /**
     * Local rank {@code localRank} of every node, in node order: the ranks of one rail.
     *
     * @param localRank a local rank every node has.
     * @return the rail's ranks.
     */
    public int[] rail(final int localRank)
    {
        final int[] rail = new int[ranksOfNode.length];
        for (int i = 0; i < rail.length; i++)
        {
            rail[i] = ranksOfNode[i][localRank];
        }
        return rail;
    }

    /**
     * One rank per node, in node order: local rank {@code localRank} where the node has one, else its lowest rank.
     *
     * @param localRank a local rank.
     * @return the leaders.
     */
    public int[] leaders(final int localRank)
    {
        final int[] leaders = new int[ranksOfNode.length];
        for (int i = 0; i < leaders.length; i++)
        {
            leaders[i] = ranksOfNode[i][localRank < ranksOfNode[i].length ? localRank : 0];
        }
        return leaders;
    }

    /** @return every rank, node by node: the order in which a ring crosses between nodes once per node. */
    public int[] byNode()
    {
        final int[] order = new int[nodeOfRank.length];
        int next = 0;
        for (final int[] node : ranksOfNode)
        {
            System.arraycopy(node, 0, order, next, node.length);
            next += node.length;
        }
        return order;
    }

    /**
     * Every rank, rail by rail, for even nodes: position {@code j N + i} holds local rank {@code j} of node
     * {@code i}, so that each rail's ranks are consecutive and in node order.
     *
     * @return the order.
     * @throws IllegalStateException when the nodes are not even.
     */
    public int[] byRail()
    {
        if (!even)
        {
            throw new IllegalStateException("rails need even nodes: " + this);
        }
        final int[] order = new int[nodeOfRank.length];
        for (int j = 0; j < mostPerNode; j++)
        {
            for (int i = 0; i < ranksOfNode.length; i++)
            {
                order[j * ranksOfNode.length + i] = ranksOfNode[i][j];
            }
        }
        return order;
    }

    @Override
    public boolean equals(final Object other)
    {
        return other instanceof RankLayout layout && Arrays.equals(nodeOfRank, layout.nodeOfRank);
    }

    @Override
    public int hashCode()
    {
        return Arrays.hashCode(nodeOfRank);
    }

    /**
     * For logs: {@code "2 nodes x 4 ranks"}, {@code "3 nodes, up to 3 ranks each, interleaved"}.
     *
     * @return the shape in words.
     */
    @Override
    public String toString()
    {
        final int nodes = ranksOfNode.length;
        final String s = nodes == 1 ? "1 node x " + ranks(worldSize()) :
            even ? nodes + " nodes x " + ranks(mostPerNode) : nodes + " nodes, up to " + mostPerNode + " ranks each";
        return contiguous || nodes == 1 ? s : s + ", interleaved";
    }

    private static String ranks(final int n)
    {
        return n == 1 ? "1 rank" : n + " ranks";
    }
}
