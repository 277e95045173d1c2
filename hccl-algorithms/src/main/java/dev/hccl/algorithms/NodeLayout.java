package dev.hccl.algorithms;

import dev.hccl.api.spi.PeerGroup;

/**
 * Which ranks of a group share a node, as the hierarchical schedules see it: the nodes in order of their lowest
 * ranks, each node's ranks in rank order, so that local rank {@code j} of node {@code i} is the same rank on every
 * rank's view. Built from {@link PeerGroup#node(int)}, whose numbers need not be dense or ordered here (a
 * {@link SubGroup} reports its parent's), and whose nodes need not hold consecutive ranks.
 */
final class NodeLayout
{
    /** The ranks of each node, in rank order, nodes in order of their lowest ranks. */
    private final int[][] nodes;
    /** Each rank's node, an index into {@link #nodes}. */
    private final int[] nodeOf;
    /** Each rank's place within its node. */
    private final int[] localOf;
    private final int rank;
    private final boolean even;

    private NodeLayout(final int[][] nodes, final int[] nodeOf, final int[] localOf, final int rank)
    {
        this.nodes = nodes;
        this.nodeOf = nodeOf;
        this.localOf = localOf;
        this.rank = rank;
        boolean same = true;
        for (final int[] node : nodes)
        {
            same &= node.length == nodes[0].length;
        }
        this.even = same;
    }

    /**
     * The layout of a group.
     *
     * @param group the ranks.
     * @return its nodes.
     */
    static NodeLayout of(final PeerGroup group)
    {
        final int n = group.size();
        // Node numbers as the group reports them, by dense index in order of first appearance (each node's lowest
        // rank), and how many ranks each holds: two passes over small int arrays, no boxing.
        final int[] ids = new int[n];
        final int[] sizes = new int[n];
        final int[] nodeOf = new int[n];
        final int[] localOf = new int[n];
        int count = 0;
        for (int r = 0; r < n; r++)
        {
            final int id = group.node(r);
            int index = 0;
            while (index < count && ids[index] != id)
            {
                index++;
            }
            if (index == count)
            {
                ids[count++] = id;
            }
            nodeOf[r] = index;
            localOf[r] = sizes[index]++;
        }
        final int[][] nodes = new int[count][];
        for (int i = 0; i < count; i++)
        {
            nodes[i] = new int[sizes[i]];
        }
        for (int r = 0; r < n; r++)
        {
            nodes[nodeOf[r]][localOf[r]] = r;
        }
        return new NodeLayout(nodes, nodeOf, localOf, group.rank());
    }

    /** Number of nodes. */
    int nodes()
    {
        return nodes.length;
    }

    /** Whether every node holds the same number of ranks. */
    boolean even()
    {
        return even;
    }

    /** Ranks per node; meaningful when {@link #even()}. */
    int perNode()
    {
        return nodes[0].length;
    }

    /** The node of a rank, numbered from 0 in order of the nodes' lowest ranks. */
    int nodeOf(final int r)
    {
        return nodeOf[r];
    }

    /** The place of a rank within its node. */
    int localOf(final int r)
    {
        return localOf[r];
    }

    /** This rank's node. */
    int node()
    {
        return nodeOf[rank];
    }

    /** This rank's place within its node. */
    int localRank()
    {
        return localOf[rank];
    }

    /** The ranks of one node, in rank order; not to be changed. */
    int[] ranksOf(final int node)
    {
        return nodes[node];
    }

    /**
     * Local rank {@code localRank} of every node, in node order: the ranks of one rail. Every node must have that
     * local rank.
     */
    int[] rail(final int localRank)
    {
        final int[] rail = new int[nodes.length];
        for (int i = 0; i < rail.length; i++)
        {
            rail[i] = nodes[i][localRank];
        }
        return rail;
    }

    /**
     * One rank per node, in node order: local rank {@code localRank} where the node has one, else the node's lowest
     * rank.
     */
    int[] leaders(final int localRank)
    {
        final int[] leaders = new int[nodes.length];
        for (int i = 0; i < leaders.length; i++)
        {
            leaders[i] = nodes[i][localRank < nodes[i].length ? localRank : 0];
        }
        return leaders;
    }

    /**
     * Every rank, node by node: the order in which a ring crosses between nodes once per node.
     */
    int[] byNode()
    {
        final int[] order = new int[nodeOf.length];
        int next = 0;
        for (final int[] node : nodes)
        {
            for (final int r : node)
            {
                order[next++] = r;
            }
        }
        return order;
    }

    /**
     * Every rank, rail by rail (local rank 0 of every node, then local rank 1, ...), for even nodes: position
     * {@code j N + i} holds local rank {@code j} of node {@code i}, so that rail {@code j}'s ranks are contiguous and
     * in node order.
     */
    int[] byRail()
    {
        final int perNode = perNode();
        final int[] order = new int[nodeOf.length];
        for (int j = 0; j < perNode; j++)
        {
            for (int i = 0; i < nodes.length; i++)
            {
                order[j * nodes.length + i] = nodes[i][j];
            }
        }
        return order;
    }
}
