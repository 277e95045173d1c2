package dev.hccl.core.topology;

import dev.hccl.api.RankLayout;
import dev.hccl.api.Topology;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The topology learnt at creation from where every rank said it runs. Over TCP it also knows the interface each rank
 * uses and its address there.
 */
public final class StaticTopology implements Topology
{
    /**
     * Where one rank runs, as it reported at the rendezvous.
     *
     * @param nodeId        the node's identity: host name, boot id and network namespace, or the override given.
     * @param hostName      the host name.
     * @param interfaceName the interface its transport listens on, or empty when the ranks run in one JVM.
     * @param address       its address on that interface, or empty when the ranks run in one JVM.
     * @param cpus          the CPUs its process may run on, in Linux's list format
     *                      ({@link dev.hccl.api.spi.CpuList}), or empty when not known (ranks in one JVM, a system
     *                      that does not say).
     */
    public record Place(String nodeId, String hostName, String interfaceName, String address, String cpus)
    {
        /**
         * Normalises absent values to empty.
         *
         * @param nodeId        the node's identity.
         * @param hostName      the host name.
         * @param interfaceName the interface, or null.
         * @param address       the address, or null.
         * @param cpus          the CPUs, or null when not known.
         */
        public Place
        {
            interfaceName = interfaceName == null ? "" : interfaceName;
            address = address == null ? "" : address;
            cpus = cpus == null ? "" : cpus;
        }

        /**
         * A place whose CPUs are not known.
         *
         * @param nodeId        the node's identity.
         * @param hostName      the host name.
         * @param interfaceName the interface, or null.
         * @param address       the address, or null.
         */
        public Place(final String nodeId, final String hostName, final String interfaceName, final String address)
        {
            this(nodeId, hostName, interfaceName, address, "");
        }

        /**
         * A rank in this JVM, with no interface.
         *
         * @param nodeId   the node's identity.
         * @param hostName the host name.
         * @return the place.
         */
        public static Place inJvm(final String nodeId, final String hostName)
        {
            return new Place(nodeId, hostName, "", "");
        }
    }

    private final List<Place> places;
    private final RankLayout layout;

    /**
     * @param places each rank's place, in rank order.
     */
    public StaticTopology(final List<Place> places)
    {
        this.places = List.copyOf(places);
        final Map<String, Integer> keys = new HashMap<>();
        final int[] keyOfRank = new int[this.places.size()];
        for (int r = 0; r < keyOfRank.length; r++)
        {
            keyOfRank[r] = keys.computeIfAbsent(this.places.get(r).nodeId(), id -> keys.size());
        }
        this.layout = RankLayout.ofNodes(keyOfRank);
    }

    /**
     * The topology of {@code worldSize} ranks on one node, in one JVM.
     *
     * @param worldSize ranks.
     * @param nodeId    the node's identity.
     * @param hostName  the node's host name.
     * @return the topology.
     */
    public static StaticTopology singleNode(final int worldSize, final String nodeId, final String hostName)
    {
        return new StaticTopology(Collections.nCopies(worldSize, Place.inJvm(nodeId, hostName)));
    }

    /**
     * The topology of some ranks, renumbered.
     *
     * @param ranks the ranks of this topology that form the new one, in their new order.
     * @return the sub-topology.
     */
    public StaticTopology subset(final int[] ranks)
    {
        final List<Place> chosen = new ArrayList<>(ranks.length);
        for (final int r : ranks)
        {
            chosen.add(places.get(r));
        }
        return new StaticTopology(chosen);
    }

    @Override
    public RankLayout layout()
    {
        return layout;
    }

    @Override
    public String nodeId(final int node)
    {
        return firstOn(node).nodeId();
    }

    /** {@inheritDoc} As the node's lowest rank reported it. */
    @Override
    public String hostName(final int node)
    {
        return firstOn(node).hostName();
    }

    /**
     * @param rank a rank.
     * @return where it runs.
     */
    public Place place(final int rank)
    {
        return places.get(rank);
    }

    private Place firstOn(final int node)
    {
        return places.get(layout.ranksOn(node)[0]);
    }

    @Override
    public String toString()
    {
        return layout + ": " + Arrays.deepToString(IntStream.range(0, layout.nodeCount()).mapToObj(layout::ranksOn)
            .toArray());
    }
}
