package dev.hccl.core;

import dev.hccl.core.op.Mix;

import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.stream.IntStream;

/**
 * What {@link dev.hccl.api.Communicator#split} makes of every rank's colour and key, as MPI's {@code MPI_Comm_split}
 * does: the ranks of this rank's colour ordered by key, then by parent rank, and an id every member derives alike.
 *
 * @param members the parent ranks of the new communicator, in their new order.
 * @param rank    this rank's place among them.
 * @param commId  the new communicator's id.
 */
record SplitPlan(int[] members, int rank, long commId)
{
    /**
     * @param colorsAndKeys every parent rank's colour and key, two native ints each, in rank order.
     * @param parentRank    this rank in the parent.
     * @param parentId      the parent's id.
     * @param splitIndex    how many splits the parent made before this one: the same on every rank.
     * @return the plan, or null when this rank's colour is negative (it joins no communicator).
     */
    static SplitPlan of(final ByteBuffer colorsAndKeys, final int parentRank, final long parentId, final int splitIndex)
    {
        final int color = colorsAndKeys.getInt(8 * parentRank);
        if (color < 0)
        {
            return null;
        }
        final int n = colorsAndKeys.capacity() / 8;
        final int[] members = IntStream.range(0, n)
            .filter(r -> colorsAndKeys.getInt(8 * r) == color).boxed()
            .sorted(Comparator.<Integer>comparingInt(r -> colorsAndKeys.getInt(8 * r + 4)).thenComparingInt(r -> r))
            .mapToInt(Integer::intValue).toArray();
        int rank = 0;
        while (members[rank] != parentRank)
        {
            rank++;
        }
        return new SplitPlan(members, rank, mix(parentId, splitIndex, color));
    }

    /** SplitMix64 over the parent id, split index and colour: every member derives the same id, unlikely to clash. */
    private static long mix(final long parent, final int splitIndex, final int color)
    {
        return Mix.finish(parent ^ (0x9E3779B97F4A7C15L * (splitIndex + 1)) ^ ((long)color << 32)) & Long.MAX_VALUE;
    }
}
