package dev.hccl.api;

/**
 * The operations a communicator executes; named in errors and carried in every frame's fingerprint.
 * <p>
 * The ordinal goes on the wire, so new operations are added at the end, never in between.
 */
public enum Operation
{
    /** {@link Communicator#allReduce}. */
    ALL_REDUCE("allReduce"),
    /** {@link Communicator#allGather}. */
    ALL_GATHER("allGather"),
    /** {@link Communicator#reduceScatter}. */
    REDUCE_SCATTER("reduceScatter"),
    /** {@link Communicator#broadcast}. */
    BROADCAST("broadcast"),
    /** {@link Communicator#reduce}. */
    REDUCE("reduce"),
    /** {@link Communicator#allToAll}. */
    ALL_TO_ALL("allToAll"),
    /** {@link Communicator#send}. */
    SEND("send"),
    /** {@link Communicator#recv}. */
    RECV("recv"),
    /** {@link Communicator#barrier}. */
    BARRIER("barrier"),
    /** {@link Communicator#split}: the exchange of colours and keys. */
    SPLIT("split"),
    /** Communicator creation: bootstrap and connection set-up. */
    INIT("init"),
    /** {@link Communicator#allGatherV}. */
    ALL_GATHER_V("allGatherV"),
    /** {@link Communicator#reduceScatterV}. */
    REDUCE_SCATTER_V("reduceScatterV"),
    /** {@link Communicator#allToAllV}. */
    ALL_TO_ALL_V("allToAllV"),
    /** {@link Communicator#scatter}. */
    SCATTER("scatter"),
    /** {@link Communicator#gather}. */
    GATHER("gather");

    private static final Operation[] VALUES = values();

    private final String displayName;

    Operation(final String displayName)
    {
        this.displayName = displayName;
    }

    /**
     * The name users know the operation by, as in the API.
     *
     * @return e.g. {@code "allReduce"}.
     */
    public String displayName()
    {
        return displayName;
    }

    /**
     * The operation with the given {@link #ordinal()}, as carried on the wire.
     *
     * @param ordinal the ordinal.
     * @return the operation.
     * @throws IllegalArgumentException if no operation has that ordinal.
     */
    public static Operation fromOrdinal(final int ordinal)
    {
        if (ordinal < 0 || ordinal >= VALUES.length)
        {
            throw new IllegalArgumentException("no Operation with ordinal " + ordinal);
        }
        return VALUES[ordinal];
    }
}
