package dev.hccl.core.events;

import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;

/**
 * What every operation's event says: the communicator, the rank, the operation and its sequence number, how many
 * elements, the transports in use and whether it failed.
 */
public abstract class OperationEvent extends Event
{
    /** The communicator's id in hexadecimal, as the log, dumps and {@code hccl-trace} show it. */
    @Label("Communicator")
    public String communicator;

    /** This rank in the communicator. */
    @Label("Rank")
    public int rank;

    /** The communicator's ranks. */
    @Label("World Size")
    public int worldSize;

    /** The operation's sequence number in the communicator, which every rank shares for a collective. */
    @Label("Sequence")
    public long sequence;

    /** The operation, as the API names it ({@code allReduce}, {@code send}, ...). */
    @Label("Operation")
    public String operation;

    /** Elements, as the call gave them. */
    @Label("Count")
    public long count;

    /** The transports the communicator's links use, such as {@code shm+netty}. */
    @Label("Transport")
    public String transport;

    /** Whether the operation failed (the failure has an event of its own). */
    @Label("Failed")
    @Description("Whether the operation failed; its failure event says why")
    public boolean failed;
}
