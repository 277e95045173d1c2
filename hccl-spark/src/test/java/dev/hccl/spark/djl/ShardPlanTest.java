package dev.hccl.spark.djl;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The plan every task of a training stage computes from the same gathered messages: equal shards, and the same error
 * on every rank for tasks that share a JVM or a partition without rows.
 */
class ShardPlanTest
{
    private static String[] messages(final String... m)
    {
        return m;
    }

    @Test
    void shardsArePaddedToTheLargestPartitionWithTheirOwnRowsFromTheFirst()
    {
        final ShardPlan plan = ShardPlan.agree(1, messages(ShardPlan.message(5, "1"), ShardPlan.message(2, "2"),
            ShardPlan.message(4, "3")), true);
        assertEquals(5, plan.paddedRows());
        assertEquals(2, plan.rows(1));
        assertEquals(List.of("a", "b", "a", "b", "a"), plan.pad(List.of("a", "b")));
        assertEquals(List.of(1, 2, 3, 4, 1), plan.pad(List.of(1, 2, 3, 4)));
        final List<Integer> full = List.of(1, 2, 3, 4, 5);
        assertSame(full, plan.pad(full));
    }

    @Test
    void tasksInOneJvmFailEveryRankNamingTheExecutorAndWhatToChange()
    {
        final String[] gathered = messages(ShardPlan.message(3, "driver"), ShardPlan.message(3, "driver"),
            ShardPlan.message(3, "driver"));
        for (int rank = 0; rank < gathered.length; rank++)
        {
            final int r = rank;
            final HcclException e = assertThrows(HcclException.class, () -> ShardPlan.agree(r, gathered, true));
            assertEquals(ErrorCode.E_PARA, e.errorCode());
            assertEquals(r, e.rank());
            assertTrue(e.getMessage().contains("tasks 0 and 1 of the training stage run in one JVM (executor driver)")
                && e.getMessage().contains("spark.executor.cores equal to spark.task.cpus"), e.getMessage());
        }
        final HcclException later = assertThrows(HcclException.class, () -> ShardPlan.agree(2, messages(
            ShardPlan.message(3, "1"), ShardPlan.message(3, "2"), ShardPlan.message(3, "1")), true));
        assertEquals(2, later.rank());
        assertEquals(0, later.peer());
        assertTrue(later.getMessage().contains("tasks 0 and 2"), later.getMessage());
    }

    @Test
    void aPartitionWithoutRowsFailsEveryRankWithTheCounts()
    {
        final String[] gathered = messages(ShardPlan.message(3, "1"), ShardPlan.message(0, "2"));
        for (int rank = 0; rank < 2; rank++)
        {
            final int r = rank;
            final HcclException e = assertThrows(HcclException.class, () -> ShardPlan.agree(r, gathered, true));
            assertEquals(r, e.rank());
            assertTrue(e.getMessage().contains("partition 1 of the DataFrame has no rows to train on (rows per " +
                "partition: [3, 0])"), e.getMessage());
        }
        // Without a DataFrame no task has rows, and none needs them.
        final ShardPlan none = ShardPlan.agree(0, messages(ShardPlan.message(0, "1"), ShardPlan.message(0, "2")),
            false);
        assertEquals(List.of(), none.pad(List.of()));
    }
}
