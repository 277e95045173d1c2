package dev.hccl.core.events;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * One send or receive on one rank, from when its transfers were posted to when a waiter saw them complete.
 */
@Name(PointToPointEvent.NAME)
@Label("HCCL Send/Receive")
@Category("HCCL")
@Description("A send or receive on one rank, from posting its transfers to their completion")
@StackTrace(false)
public final class PointToPointEvent extends OperationEvent
{
    /** The event's name, as {@code jfr print --events} takes it. */
    public static final String NAME = "dev.hccl.PointToPoint";

    /** The other rank, in the communicator. */
    @Label("Peer")
    public int peer;

    /** The data type. */
    @Label("Data Type")
    public String dataType;

    /** Bytes moved. */
    @Label("Bytes")
    @DataAmount(DataAmount.BYTES)
    public long bytes;
}
