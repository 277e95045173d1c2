package dev.hccl.core.topology;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Each rank's interface and address, as the TCP bootstrap records them, survive a split; in one JVM they are empty.
 */
class StaticTopologyInterfacesTest
{
    @Test
    void interfacesFollowTheirRanksIntoASubset()
    {
        final StaticTopology topology = new StaticTopology(new String[]{"a", "b", "a"}, new String[]{"ha", "hb", "ha"},
            new String[]{"eth0", "ib0", "eth1"}, new String[]{"10.0.0.1", "10.1.0.2", "10.0.1.1"});
        assertEquals("ib0", topology.interfaceName(1));
        assertEquals("10.1.0.2", topology.address(1));
        final StaticTopology sub = topology.subset(new int[]{2, 1});
        assertEquals("eth1", sub.interfaceName(0));
        assertEquals("10.0.1.1", sub.address(0));
        assertEquals("ib0", sub.interfaceName(1));
        assertEquals("10.1.0.2", sub.address(1));
    }

    @Test
    void ranksInOneJvmHaveNoInterface()
    {
        final StaticTopology topology = StaticTopology.singleNode(2, "a", "ha");
        assertEquals("", topology.interfaceName(1));
        assertEquals("", topology.address(0));
        assertEquals("", topology.subset(new int[]{1}).interfaceName(0));
    }
}
