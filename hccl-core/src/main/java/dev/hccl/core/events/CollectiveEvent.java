package dev.hccl.core.events;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * One collective on one rank, from the moment it started running (not when it was issued) to its completion.
 */
@Name(CollectiveEvent.NAME)
@Label("HCCL Collective")
@Category("HCCL")
@Description("A collective operation on one rank: what it moved, which algorithm and transports ran it, and how long "
    + "it waited for its peers")
@StackTrace(false)
public final class CollectiveEvent extends OperationEvent
{
    /** The event's name, as {@code jfr print --events} takes it. */
    public static final String NAME = "dev.hccl.Collective";

    /** The data type, as {@code DataType.name()} spells it; empty for a barrier. */
    @Label("Data Type")
    public String dataType;

    /** The reduction, or empty. */
    @Label("Reduction")
    public String reduction;

    /** The root, or -1. */
    @Label("Root")
    public int root;

    /** The algorithm that ran it, as {@code HCCL_ALGO} names it. */
    @Label("Algorithm")
    public String algorithm;

    /**
     * The time this rank spent waiting for other ranks (their data or their signals) while the operation ran: the
     * rest of its duration went to copies and reductions. A rank that waits much less than the others is the slow one.
     */
    @Label("Peer Wait")
    @Description("Time spent waiting for other ranks' data or signals; the rank waiting least is the slowest")
    @Timespan(Timespan.NANOSECONDS)
    public long peerWait;

    /**
     * The size, as nccl-tests' size column counts it: the whole output of an all-gather, the whole input of a
     * reduce-scatter or all-to-all, else the buffer; 0 for the V collectives.
     */
    @Label("Bytes")
    @DataAmount(DataAmount.BYTES)
    public long bytes;
}
