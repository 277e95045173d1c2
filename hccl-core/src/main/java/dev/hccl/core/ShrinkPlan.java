package dev.hccl.core;

import dev.hccl.core.op.Mix;

import java.util.Arrays;

/**
 * What {@link dev.hccl.api.Communicator#shrink} makes of the ranks to leave out, as {@code ncclCommShrink} does: the
 * others, in their order, and an id every survivor derives alike from the parent, the shrink's index and the ranks
 * left out (survivors that disagree on them make different communicators, which refuse each other's messages).
 *
 * @param members the parent ranks of the new communicator, in order.
 * @param rank    this rank's place among them.
 * @param commId  the new communicator's id.
 */
record ShrinkPlan(int[] members, int rank, long commId)
{
    /**
     * @param worldSize     ranks of the parent.
     * @param parentRank    this rank in the parent.
     * @param excludedRanks ranks of the parent to leave out.
     * @param parentId      the parent's id.
     * @param shrinkIndex   how many shrinks the parent made before this one.
     * @return the plan.
     * @throws IllegalArgumentException when a rank is out of range, repeated, or this rank.
     */
    static ShrinkPlan of(
        final int worldSize, final int parentRank, final int[] excludedRanks, final long parentId, final int shrinkIndex)
    {
        final int[] excluded = excludedRanks.clone();
        Arrays.sort(excluded);
        for (int i = 0; i < excluded.length; i++)
        {
            if (excluded[i] < 0 || excluded[i] >= worldSize)
            {
                throw new IllegalArgumentException("shrink: rank " + excluded[i] + " is not in [0, " + worldSize + ")");
            }
            if (i > 0 && excluded[i] == excluded[i - 1])
            {
                throw new IllegalArgumentException("shrink: rank " + excluded[i] + " is listed twice");
            }
            if (excluded[i] == parentRank)
            {
                throw new IllegalArgumentException("shrink: rank " + parentRank + " cannot leave itself out; the " +
                    "ranks left out do not call shrink");
            }
        }
        final int[] members = new int[worldSize - excluded.length];
        int rank = -1;
        for (int r = 0, m = 0, x = 0; r < worldSize; r++)
        {
            if (x < excluded.length && excluded[x] == r)
            {
                x++;
                continue;
            }
            rank = r == parentRank ? m : rank;
            members[m++] = r;
        }
        long h = parentId ^ 0x5348_5249_4E4B_0000L ^ (0x9E3779B97F4A7C15L * (shrinkIndex + 1));
        for (final int x : excluded)
        {
            h = Mix.finish(h ^ x);
        }
        return new ShrinkPlan(members, rank, Mix.finish(h) & Long.MAX_VALUE);
    }
}
