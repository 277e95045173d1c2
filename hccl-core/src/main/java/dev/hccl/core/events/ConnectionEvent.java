package dev.hccl.core.events;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A transport connecting this rank to its peers while a communicator is created: one event per transport that
 * connected some, with their ranks.
 */
@Name(ConnectionEvent.NAME)
@Label("HCCL Connection")
@Category("HCCL")
@Description("A transport connecting this rank to peers during init")
@StackTrace(false)
public final class ConnectionEvent extends Event
{
    /** The event's name, as {@code jfr print --events} takes it. */
    public static final String NAME = "dev.hccl.Connection";

    /** This rank. */
    @Label("Rank")
    public int rank;

    /** The communicator's ranks. */
    @Label("World Size")
    public int worldSize;

    /** The transport, such as {@code shm} or {@code netty}. */
    @Label("Transport")
    public String transport;

    /** The peers it connected, as ranges: {@code [1-3, 5]}. */
    @Label("Peers")
    public String peers;

    /** How many peers it connected. */
    @Label("Peer Count")
    public int peerCount;
}
