package dev.hccl.api;

/**
 * The checks of a configuration that span several settings (each setting's own range its {@link Setting} checks):
 * the rank within the world, the local rank within the node, the frame limit above the segment size.
 */
final class ConfigChecks
{
    private ConfigChecks()
    {
    }

    /**
     * Checks a resolved configuration as a whole.
     *
     * @param c          the configuration, every setting resolved.
     * @param frameGiven whether the builder set {@link CommConfig#MAX_FRAME_BYTES}.
     * @throws IllegalArgumentException naming the settings that do not fit together.
     */
    static void across(final CommConfig c, final boolean frameGiven)
    {
        final int worldSize = c.worldSize();
        final int rank = c.rank();
        // With a rank table and no size given, the table's size is checked when it is read (hccl-core's RankTable).
        require(rank < worldSize || (!c.given(CommConfig.WORLD_SIZE) && c.get(CommConfig.RANK_TABLE_FILE) != null),
            "rank must be in [0, " + worldSize + "), got " + rank);
        require(c.localRank() == CommConfig.DERIVE || c.localSize() == CommConfig.DERIVE ||
            c.localRank() < c.localSize(),
            "localRank " + c.localRank() + " must be below localSize " + c.localSize());
        final Integer frameBytes = frameGiven ? c.get(CommConfig.MAX_FRAME_BYTES) : null;
        require(null == frameBytes || frameBytes >= 1, "maxFrameBytes must be positive, got " + frameBytes);
        require(c.maxFrameBytes() >= c.segmentBytes(), "maxFrameBytes (" + c.maxFrameBytes() +
            ") must be at least " + CommConfig.SEGMENT_SIZE.variable() + " (" + c.segmentBytes() + ")");
    }

    private static void require(final boolean condition, final String message)
    {
        if (!condition)
        {
            throw new IllegalArgumentException(message);
        }
    }
}
