package dev.hccl.api;

/**
 * The operations a communicator executes; named in errors and carried in every frame's fingerprint.
 * <p>
 * Each operation's {@link #code()} goes on the wire.
 */
public enum Operation
{
    /** {@link Communicator#allReduce}. */
    ALL_REDUCE(0, "allReduce"),
    /** {@link Communicator#allGather}. */
    ALL_GATHER(1, "allGather"),
    /** {@link Communicator#reduceScatter}. */
    REDUCE_SCATTER(2, "reduceScatter"),
    /** {@link Communicator#broadcast}. */
    BROADCAST(3, "broadcast"),
    /** {@link Communicator#reduce}. */
    REDUCE(4, "reduce"),
    /** {@link Communicator#allToAll}. */
    ALL_TO_ALL(5, "allToAll"),
    /** {@link Communicator#send}. */
    SEND(6, "send"),
    /** {@link Communicator#recv}. */
    RECV(7, "recv"),
    /** {@link Communicator#barrier}. */
    BARRIER(8, "barrier"),
    /** {@link Communicator#split}: the exchange of colours and keys. */
    SPLIT(9, "split"),
    /** Communicator creation: bootstrap and connection set-up. */
    INIT(10, "init"),
    /** {@link Communicator#allGatherV}. */
    ALL_GATHER_V(11, "allGatherV"),
    /** {@link Communicator#reduceScatterV}. */
    REDUCE_SCATTER_V(12, "reduceScatterV"),
    /** {@link Communicator#allToAllV}. */
    ALL_TO_ALL_V(13, "allToAllV"),
    /** {@link Communicator#scatter}. */
    SCATTER(14, "scatter"),
    /** {@link Communicator#gather}. */
    GATHER(15, "gather");

    /** By wire code. */
    private static final Operation[] BY_CODE = WireCodes.index(values(), Operation::code, new Operation[255]);

    private final int code;
    private final String displayName;

    Operation(final int code, final String displayName)
    {
        this.code = code;
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
     * The number that stands for this operation on the wire, fixed once given: never reuse or renumber one.
     *
     * @return 0 to 254.
     */
    public int code()
    {
        return code;
    }

    /**
     * The operation a wire code stands for.
     *
     * @param code a code, as read from a peer.
     * @return the operation, or null when no operation has that code.
     */
    public static Operation fromCode(final int code)
    {
        return WireCodes.find(BY_CODE, code);
    }
}
