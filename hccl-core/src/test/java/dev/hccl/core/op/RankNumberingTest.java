package dev.hccl.core.op;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** A child communicator of root ranks {4, 1, 6}: each way, and what is not a member. */
class RankNumberingTest
{
    @Test
    void eachRankHasItsRootRankAndBackAndOthersAreNotMembers()
    {
        final int[] global = {4, 1, 6};
        final RankNumbering numbering = new RankNumbering(global);
        assertEquals(3, numbering.size());
        for (int r = 0; r < global.length; r++)
        {
            assertEquals(global[r], numbering.global(r));
            assertEquals(r, numbering.rankOf(global[r]));
        }
        for (final int outsider : new int[] {-1, 0, 2, 3, 5, 7, 1 << 20})
        {
            assertEquals(-1, numbering.rankOf(outsider), "root rank " + outsider);
        }
        global[0] = 9;
        assertEquals(4, numbering.global(0), "a value: the array it was made from may change");
        final int[] copy = numbering.globalRanks();
        assertArrayEquals(new int[] {4, 1, 6}, copy);
        copy[1] = 9;
        assertEquals(1, numbering.global(1), "nor the array it hands out");
    }
}
