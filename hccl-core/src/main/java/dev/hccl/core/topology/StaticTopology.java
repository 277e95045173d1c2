package dev.hccl.core.topology;

import dev.hccl.api.Topology;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The topology learnt at creation from every rank's node identity. Nodes are numbered in order of their lowest rank;
 * a node's ranks need not be contiguous. Over TCP it also knows the interface each rank uses and its address there.
 */
public final class StaticTopology implements Topology
{
    private final int[] nodeOfRank;
    private final int[] localRankOfRank;
    private final List<List<Integer>> ranksOfNode;
    private final List<String> nodeIds;
    private final List<String> hostNames;
    private final String[] ifNameOfRank;
    private final String[] addressOfRank;

    /**
     * Builds the topology, without interfaces (ranks in one JVM).
     *
     * @param nodeIdOfRank   each rank's node identity.
     * @param hostNameOfRank each rank's host name.
     */
    public StaticTopology(final String[] nodeIdOfRank, final String[] hostNameOfRank)
    {
        this(nodeIdOfRank, hostNameOfRank, null, null);
    }

    /**
     * Builds the topology.
     *
     * @param nodeIdOfRank   each rank's node identity.
     * @param hostNameOfRank each rank's host name.
     * @param ifNameOfRank   the interface each rank's transport listens on, or null when unknown.
     * @param addressOfRank  each rank's address on that interface, or null when unknown.
     */
    public StaticTopology(
        final String[] nodeIdOfRank, final String[] hostNameOfRank, final String[] ifNameOfRank,
        final String[] addressOfRank)
    {
        final int n = nodeIdOfRank.length;
        this.ifNameOfRank = known(ifNameOfRank, n);
        this.addressOfRank = known(addressOfRank, n);
        nodeOfRank = new int[n];
        localRankOfRank = new int[n];
        final Map<String, Integer> index = new LinkedHashMap<>();
        final List<List<Integer>> ranks = new ArrayList<>();
        for (int r = 0; r < n; r++)
        {
            Integer node = index.get(nodeIdOfRank[r]);
            if (node == null)
            {
                node = index.size();
                index.put(nodeIdOfRank[r], node);
                ranks.add(new ArrayList<>());
            }
            nodeOfRank[r] = node;
            localRankOfRank[r] = ranks.get(node).size();
            ranks.get(node).add(r);
        }
        final List<List<Integer>> frozen = new ArrayList<>();
        for (final List<Integer> list : ranks)
        {
            frozen.add(Collections.unmodifiableList(list));
        }
        ranksOfNode = Collections.unmodifiableList(frozen);
        nodeIds = List.copyOf(index.keySet());
        final List<String> names = new ArrayList<>();
        for (final List<Integer> list : ranks)
        {
            names.add(hostNameOfRank[list.get(0)]);
        }
        hostNames = List.copyOf(names);
    }

    /**
     * The topology of {@code worldSize} ranks on one node.
     *
     * @param worldSize ranks.
     * @param nodeId    the node's identity.
     * @param hostName  the node's host name.
     * @return the topology.
     */
    public static StaticTopology singleNode(final int worldSize, final String nodeId, final String hostName)
    {
        final String[] ids = new String[worldSize];
        final String[] hosts = new String[worldSize];
        Arrays.fill(ids, nodeId);
        Arrays.fill(hosts, hostName);
        return new StaticTopology(ids, hosts);
    }

    /**
     * The topology of a subset of ranks, renumbered.
     *
     * @param ranks the ranks of this topology that form the new one, in their new order.
     * @return the sub-topology.
     */
    public StaticTopology subset(final int[] ranks)
    {
        final String[] ids = new String[ranks.length];
        final String[] hosts = new String[ranks.length];
        final String[] ifNames = new String[ranks.length];
        final String[] addresses = new String[ranks.length];
        for (int i = 0; i < ranks.length; i++)
        {
            ids[i] = nodeIds.get(nodeOfRank[ranks[i]]);
            hosts[i] = hostNames.get(nodeOfRank[ranks[i]]);
            ifNames[i] = ifNameOfRank[ranks[i]];
            addresses[i] = addressOfRank[ranks[i]];
        }
        return new StaticTopology(ids, hosts, ifNames, addresses);
    }

    @Override
    public int worldSize()
    {
        return nodeOfRank.length;
    }

    @Override
    public int nodeCount()
    {
        return ranksOfNode.size();
    }

    @Override
    public int nodeOf(final int rank)
    {
        return nodeOfRank[rank];
    }

    @Override
    public List<Integer> ranksOnNode(final int node)
    {
        return ranksOfNode.get(node);
    }

    @Override
    public int localRank(final int rank)
    {
        return localRankOfRank[rank];
    }

    @Override
    public String nodeId(final int node)
    {
        return nodeIds.get(node);
    }

    @Override
    public String hostName(final int node)
    {
        return hostNames.get(node);
    }

    /**
     * The network interface a rank's transport listens on, chosen by {@code HCCL_SOCKET_IFNAME} / {@code HCCL_IF_IP}
     * or by default.
     *
     * @param rank the rank.
     * @return the interface's name, such as {@code eth0}, or empty when the ranks run in one JVM.
     */
    public String interfaceName(final int rank)
    {
        return ifNameOfRank[rank];
    }

    /**
     * The address a rank's transport listens on, which the other ranks dial.
     *
     * @param rank the rank.
     * @return the address as a literal, or empty when the ranks run in one JVM.
     */
    public String address(final int rank)
    {
        return addressOfRank[rank];
    }

    private static String[] known(final String[] values, final int n)
    {
        final String[] copy = new String[n];
        Arrays.fill(copy, "");
        if (values != null)
        {
            for (int r = 0; r < n; r++)
            {
                copy[r] = values[r] == null ? "" : values[r];
            }
        }
        return copy;
    }

    @Override
    public String toString()
    {
        return nodeCount() + " node(s): " + ranksOfNode;
    }
}
