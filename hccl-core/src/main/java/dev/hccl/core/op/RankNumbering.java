package dev.hccl.core.op;

import java.util.Arrays;

/**
 * A communicator's ranks in the root communicator's numbering, and back: what the wire names (root ranks) turned
 * into what the user reads (this communicator's ranks). A value, fixed when the communicator is made.
 */
public final class RankNumbering
{
    private final int[] globalRanks;
    private final int[] rankOfGlobal;

    /**
     * @param globalRanks each rank of the communicator in the root communicator, distinct and not negative.
     */
    public RankNumbering(final int[] globalRanks)
    {
        this.globalRanks = globalRanks.clone();
        int maxGlobal = 0;
        for (final int g : this.globalRanks)
        {
            maxGlobal = Math.max(maxGlobal, g);
        }
        this.rankOfGlobal = new int[maxGlobal + 1];
        Arrays.fill(rankOfGlobal, -1);
        for (int r = 0; r < this.globalRanks.length; r++)
        {
            rankOfGlobal[this.globalRanks[r]] = r;
        }
    }

    /**
     * @return the communicator's ranks.
     */
    public int size()
    {
        return globalRanks.length;
    }

    /**
     * @return each rank of the communicator in the root communicator, in a new array.
     */
    public int[] globalRanks()
    {
        return globalRanks.clone();
    }

    /**
     * @param rank a rank of this communicator.
     * @return its rank in the root communicator.
     */
    public int global(final int rank)
    {
        return globalRanks[rank];
    }

    /**
     * @param global a rank of the root communicator.
     * @return its rank in this communicator, or -1 when it is not a member.
     */
    public int rankOf(final int global)
    {
        return global >= 0 && global < rankOfGlobal.length ? rankOfGlobal[global] : -1;
    }
}
