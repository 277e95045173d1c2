package dev.hccl.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ShrinkPlanTest
{
    @Test
    void theSurvivorsKeepTheirOrderAndAgreeOnTheId()
    {
        final ShrinkPlan atRank3 = ShrinkPlan.of(5, 3, new int[]{4, 1}, 77L, 0);
        final ShrinkPlan atRank0 = ShrinkPlan.of(5, 0, new int[]{1, 4}, 77L, 0);
        assertArrayEquals(new int[]{0, 2, 3}, atRank3.members());
        assertEquals(2, atRank3.rank());
        assertEquals(0, atRank0.rank());
        assertEquals(atRank0.commId(), atRank3.commId(), "the order of the list does not matter");
    }

    @Test
    void anotherListOrAnotherShrinkMakesAnotherCommunicator()
    {
        final long id = ShrinkPlan.of(5, 0, new int[]{1}, 77L, 0).commId();
        assertNotEquals(id, ShrinkPlan.of(5, 0, new int[]{2}, 77L, 0).commId());
        assertNotEquals(id, ShrinkPlan.of(5, 0, new int[]{1}, 77L, 1).commId());
        assertNotEquals(id, ShrinkPlan.of(5, 0, new int[]{1}, 78L, 0).commId());
    }

    @Test
    void badListsAreRefusedNamingTheRank()
    {
        assertEquals("shrink: rank 5 is not in [0, 5)",
            assertThrows(IllegalArgumentException.class, () -> ShrinkPlan.of(5, 0, new int[]{5}, 1L, 0)).getMessage());
        assertEquals("shrink: rank 2 is listed twice",
            assertThrows(IllegalArgumentException.class, () -> ShrinkPlan.of(5, 0, new int[]{2, 2}, 1L, 0))
                .getMessage());
        assertThrows(IllegalArgumentException.class, () -> ShrinkPlan.of(5, 3, new int[]{3}, 1L, 0));
    }
}
