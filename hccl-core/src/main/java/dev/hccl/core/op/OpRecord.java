package dev.hccl.core.op;

import dev.hccl.api.CommFuture;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One operation as its observers see it ({@link OpListener}): its lane, peer and sequence number, what it moves, when
 * it was issued, started and ended ({@link System#nanoTime()}), the algorithm that ran it, how long it waited for its
 * peers and how it failed. The operation path writes it, each field once, before the event that announces the field;
 * observers only read it, on any thread.
 */
public final class OpRecord
{
    /** A time not reached yet. */
    public static final long NOT_YET = Long.MIN_VALUE;

    /** Which lane an operation was numbered in. */
    public enum Lane
    {
        /** The collectives, numbered together. */
        COLLECTIVE,
        /** The sends to one peer. */
        SEND,
        /** The receives from one peer. */
        RECV
    }

    private final Lane lane;
    private final int peer;
    private final long seq;
    private final OpDescriptor desc;
    private final CommFuture future;
    private final long issuedNanos = System.nanoTime();
    // Written with ordered stores (setRelease) and read with getAcquire: one writer at a time, and an observer needs
    // to see each field whole and after what was written before it, not a full fence per field on the hot path.
    private long startedNanos = NOT_YET;
    private long endedNanos = NOT_YET;
    private String algorithm;
    private long peerWaitNanos;
    private HcclException failure;
    private Object attachment;

    private static final VarHandle STARTED;
    private static final VarHandle ENDED;
    private static final VarHandle ALGORITHM;
    private static final VarHandle PEER_WAIT;
    private static final VarHandle FAILURE;
    private static final VarHandle ATTACHMENT;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            STARTED = lookup.findVarHandle(OpRecord.class, "startedNanos", long.class);
            ENDED = lookup.findVarHandle(OpRecord.class, "endedNanos", long.class);
            ALGORITHM = lookup.findVarHandle(OpRecord.class, "algorithm", String.class);
            PEER_WAIT = lookup.findVarHandle(OpRecord.class, "peerWaitNanos", long.class);
            FAILURE = lookup.findVarHandle(OpRecord.class, "failure", HcclException.class);
            ATTACHMENT = lookup.findVarHandle(OpRecord.class, "attachment", Object.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    OpRecord(final Lane lane, final int peer, final long seq, final OpDescriptor desc, final CommFuture future)
    {
        this.lane = lane;
        this.peer = peer;
        this.seq = seq;
        this.desc = desc;
        this.future = future;
    }

    /** @return the lane it was numbered in. */
    public Lane lane()
    {
        return lane;
    }

    /** @return the peer of a send or receive, -1 for a collective. */
    public int peer()
    {
        return peer;
    }

    /** @return its sequence number in its lane. */
    public long seq()
    {
        return seq;
    }

    /** @return what it is. */
    public OpDescriptor desc()
    {
        return desc;
    }

    /** @return when it was issued. */
    public long issuedNanos()
    {
        return issuedNanos;
    }

    /** @return when it started running (a send or receive: when its transfers were posted), or {@link #NOT_YET}. */
    public long startedNanos()
    {
        return (long)STARTED.getAcquire(this);
    }

    /** @return when it ended, or {@link #NOT_YET}. */
    public long endedNanos()
    {
        return (long)ENDED.getAcquire(this);
    }

    /** @return whether it has completed, or failed; true too once its future has, before the path says so. */
    public boolean isDone()
    {
        return endedNanos() != NOT_YET || future.isDone();
    }

    /** @return the algorithm the selector chose for it, or null (not chosen yet, or an operation without a choice). */
    public String algorithm()
    {
        return (String)ALGORITHM.getAcquire(this);
    }

    /** @return how long the thread that ran it waited for its peers' transfers and signals. */
    public long peerWaitNanos()
    {
        return (long)PEER_WAIT.getAcquire(this);
    }

    /** @return its failure, or null. */
    public HcclException failure()
    {
        return (HcclException)FAILURE.getAcquire(this);
    }

    /**
     * What one observer keeps with the operation between its events (the telemetry's flight-recorder event, begun as
     * the operation started), as a {@link java.nio.channels.SelectionKey}'s attachment.
     *
     * @return it, or null.
     */
    public Object attachment()
    {
        return ATTACHMENT.getAcquire(this);
    }

    /**
     * Keeps an observer's state with the operation.
     *
     * @param state what {@link #attachment()} returns from now on.
     */
    public void attach(final Object state)
    {
        ATTACHMENT.setRelease(this, state);
    }

    void started()
    {
        STARTED.setRelease(this, System.nanoTime());
    }

    void chose(final String name)
    {
        ALGORITHM.setRelease(this, name);
    }

    void ended(final long peerWait, final HcclException failed)
    {
        PEER_WAIT.setRelease(this, peerWait);
        FAILURE.setRelease(this, failed);
        // Last: an observer that reads the end reads the wait and the failure written before it.
        ENDED.setRelease(this, System.nanoTime());
    }

    @Override
    public String toString()
    {
        return desc + " #" + seq + (lane == Lane.COLLECTIVE ? "" : " " + lane.name().toLowerCase() + " peer " + peer);
    }
}
