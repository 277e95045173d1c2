package dev.hccl.core.topology;

import dev.hccl.core.topology.StaticTopology.Place;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Each rank's place, as the TCP bootstrap records it, survives a split; in one JVM the interfaces are empty.
 */
class StaticTopologyInterfacesTest
{
    @Test
    void placesFollowTheirRanksIntoASubset()
    {
        final StaticTopology topology = new StaticTopology(List.of(new Place("a", "ha", "eth0", "10.0.0.1"),
            new Place("b", "hb", "ib0", "10.1.0.2"), new Place("a", "ha", "eth1", "10.0.1.1")));
        assertEquals("ib0", topology.place(1).interfaceName());
        assertEquals("10.1.0.2", topology.place(1).address());
        assertArrayEquals(new int[] {0, 2}, topology.layout().ranksOn(0));
        assertEquals("hb", topology.hostName(1));
        final StaticTopology sub = topology.subset(new int[] {2, 1});
        assertEquals("eth1", sub.place(0).interfaceName());
        assertEquals("10.0.1.1", sub.place(0).address());
        assertEquals("ib0", sub.place(1).interfaceName());
        assertEquals("10.1.0.2", sub.place(1).address());
        // Renumbered: rank 1 of the subset ("b") is now on node 1, the nodes in order of their lowest ranks.
        assertEquals("a", sub.nodeId(0));
        assertEquals("b", sub.nodeId(sub.layout().nodeOf(1)));
        assertEquals(2, sub.layout().nodeCount());
    }

    @Test
    void ranksInOneJvmHaveNoInterface()
    {
        final StaticTopology topology = StaticTopology.singleNode(2, "a", "ha");
        assertEquals("", topology.place(1).interfaceName());
        assertEquals("", topology.place(0).address());
        assertEquals("", topology.subset(new int[] {1}).place(0).interfaceName());
        assertEquals(1, topology.layout().nodeCount());
    }
}
