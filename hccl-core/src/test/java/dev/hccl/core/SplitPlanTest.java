package dev.hccl.core;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Split as MPI_Comm_split: members of a colour ordered by key, ties by parent rank; the same id on every member.
 */
class SplitPlanTest
{
    private static ByteBuffer colorsAndKeys(final int... pairs)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(4 * pairs.length).order(ByteOrder.nativeOrder());
        for (int i = 0; i < pairs.length; i++)
        {
            b.putInt(4 * i, pairs[i]);
        }
        return b;
    }

    @Test
    void membersAreOrderedByKeyThenByParentRank()
    {
        // rank: 0      1      2      3       4
        final ByteBuffer all = colorsAndKeys(1, 5, 0, 0, 1, 2, -1, 0, 1, 2);
        final SplitPlan fromRank0 = SplitPlan.of(all, 0, 42, 3);
        assertArrayEquals(new int[] {2, 4, 0}, fromRank0.members());
        assertEquals(2, fromRank0.rank());
        final SplitPlan fromRank4 = SplitPlan.of(all, 4, 42, 3);
        assertEquals(1, fromRank4.rank());
        assertEquals(fromRank0.commId(), fromRank4.commId());
        final SplitPlan other = SplitPlan.of(all, 1, 42, 3);
        assertArrayEquals(new int[] {1}, other.members());
        assertNotEquals(fromRank0.commId(), other.commId());
        assertNotEquals(fromRank0.commId(), SplitPlan.of(all, 0, 42, 4).commId());
        assertNull(SplitPlan.of(all, 3, 42, 3));
    }
}
