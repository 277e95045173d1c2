package dev.hccl.api;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one model of where ranks live: nodes numbered by their lowest ranks whatever the keys, local ranks in rank
 * order, and the shape the cost model reads (most per node, even, contiguous).
 */
class RankLayoutTest
{
    @Test
    void nodesAreNumberedByTheirLowestRanksWhateverTheKeys()
    {
        // Keys as a SubGroup reports its parent's nodes: sparse and out of order.
        final RankLayout layout = RankLayout.ofNodes(7, 3, 7, 3, 9);
        assertEquals(5, layout.worldSize());
        assertEquals(3, layout.nodeCount());
        assertArrayEquals(new int[] {0, 1, 0, 1, 2}, new int[] {layout.nodeOf(0), layout.nodeOf(1), layout.nodeOf(2),
            layout.nodeOf(3), layout.nodeOf(4)});
        assertArrayEquals(new int[] {0, 0, 1, 1, 0}, new int[] {layout.localRank(0), layout.localRank(1),
            layout.localRank(2), layout.localRank(3), layout.localRank(4)});
        assertArrayEquals(new int[] {1, 3}, layout.ranksOn(1));
        assertEquals(2, layout.mostPerNode());
        assertFalse(layout.even());
        assertFalse(layout.contiguous());
        assertEquals("3 nodes, up to 2 ranks each, interleaved", layout.toString());
    }

    @Test
    void blocksAreEvenAndContiguous()
    {
        final RankLayout layout = RankLayout.blocks(2, 4);
        assertEquals(RankLayout.ofNodes(0, 0, 0, 0, 1, 1, 1, 1), layout);
        assertTrue(layout.even());
        assertTrue(layout.contiguous());
        assertEquals(4, layout.mostPerNode());
        assertEquals("2 nodes x 4 ranks", layout.toString());
        assertArrayEquals(new int[] {1, 5}, layout.rail(1));
        assertArrayEquals(new int[] {0, 4, 1, 5, 2, 6, 3, 7}, layout.byRail());
        assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5, 6, 7}, layout.byNode());
        assertEquals("1 node x 3 ranks", RankLayout.singleNode(3).toString());
    }

    @Test
    void interleavedNodesOrderRingsNodeByNode()
    {
        final RankLayout layout = RankLayout.ofNodes(0, 1, 0, 1, 1);
        assertTrue(!layout.even() && !layout.contiguous());
        assertArrayEquals(new int[] {0, 2, 1, 3, 4}, layout.byNode());
        // A node without local rank 2 is led by its lowest rank.
        assertArrayEquals(new int[] {0, 4}, layout.leaders(2));
        assertThrows(IllegalStateException.class, layout::byRail);
    }

    @Test
    void emptyLayoutsAreRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> RankLayout.of(0, r -> 0));
        assertThrows(IllegalArgumentException.class, () -> RankLayout.blocks(0, 2));
    }
}
