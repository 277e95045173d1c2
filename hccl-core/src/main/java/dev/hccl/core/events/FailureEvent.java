package dev.hccl.core.events;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * A communicator failed on this rank: the error code, the rank at fault, the operation and what happened.
 */
@Name(FailureEvent.NAME)
@Label("HCCL Failure")
@Category("HCCL")
@Description("A communicator failed on this rank")
public final class FailureEvent extends Event
{
    /** The event's name, as {@code jfr print --events} takes it. */
    public static final String NAME = "dev.hccl.Failure";

    /** The communicator's id in hexadecimal. */
    @Label("Communicator")
    public String communicator;

    /** This rank. */
    @Label("Rank")
    public int rank;

    /** The error code, such as {@code E_REMOTE}. */
    @Label("Code")
    public String code;

    /** The rank at fault, or -1 when unknown. */
    @Label("Peer")
    @Description("The rank at fault, or -1 when unknown")
    public int peer;

    /** The operation that failed, or empty. */
    @Label("Operation")
    public String operation;

    /** Its sequence number, or -1. */
    @Label("Sequence")
    public long sequence;

    /** Whether the failure passes on another rank's own. */
    @Label("Relayed")
    @Description("Whether this rank learnt of the failure from another rank, which has the original")
    public boolean relayed;

    /** The message the user gets. */
    @Label("Message")
    public String message;

    /** The first cause's class and message, or empty. */
    @Label("Cause")
    public String cause;
}
