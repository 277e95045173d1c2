package dev.hccl.algorithms;

/**
 * Where the cost model may choose an algorithm by itself, whatever its formula predicts: limits measured where the
 * formula stops holding (the figures are in {@code docs/ALGORITHMS.md}). {@code HCCL_ALGO} may force the algorithm
 * beyond them.
 *
 * @param maxBytes the largest size, as {@link CostedAlgorithm#predictSeconds} counts it.
 * @param maxRanks the most ranks.
 */
public record AutoLimits(long maxBytes, int maxRanks)
{
    /** No limits. */
    public static final AutoLimits NONE = new AutoLimits(Long.MAX_VALUE, Integer.MAX_VALUE);

    /**
     * @param maxBytes not negative.
     * @param maxRanks at least 1.
     */
    public AutoLimits
    {
        if (maxBytes < 0 || maxRanks < 1)
        {
            throw new IllegalArgumentException("limits of " + maxBytes + " bytes and " + maxRanks + " ranks");
        }
    }

    /**
     * @param worldSize ranks.
     * @param bytes     the size.
     * @return whether the cost model may choose the algorithm there.
     */
    public boolean admit(final int worldSize, final long bytes)
    {
        return bytes <= maxBytes && worldSize <= maxRanks;
    }
}
