package dev.hccl.core.op;

import dev.hccl.api.CommFuture;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;

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
    private volatile long startedNanos = NOT_YET;
    private volatile long endedNanos = NOT_YET;
    private volatile String algorithm;
    private volatile long peerWaitNanos;
    private volatile HcclException failure;
    private volatile Object attachment;

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
        return startedNanos;
    }

    /** @return when it ended, or {@link #NOT_YET}. */
    public long endedNanos()
    {
        return endedNanos;
    }

    /** @return whether it has completed, or failed; true too once its future has, before the path says so. */
    public boolean isDone()
    {
        return endedNanos != NOT_YET || future.isDone();
    }

    /** @return the algorithm the selector chose for it, or null (not chosen yet, or an operation without a choice). */
    public String algorithm()
    {
        return algorithm;
    }

    /** @return how long the thread that ran it waited for its peers' transfers and signals. */
    public long peerWaitNanos()
    {
        return peerWaitNanos;
    }

    /** @return its failure, or null. */
    public HcclException failure()
    {
        return failure;
    }

    /**
     * What one observer keeps with the operation between its events (the telemetry's flight-recorder event, begun as
     * the operation started), as a {@link java.nio.channels.SelectionKey}'s attachment.
     *
     * @return it, or null.
     */
    public Object attachment()
    {
        return attachment;
    }

    /**
     * Keeps an observer's state with the operation.
     *
     * @param state what {@link #attachment()} returns from now on.
     */
    public void attach(final Object state)
    {
        attachment = state;
    }

    void started()
    {
        startedNanos = System.nanoTime();
    }

    void chose(final String name)
    {
        algorithm = name;
    }

    void ended(final long peerWait, final HcclException failed)
    {
        peerWaitNanos = peerWait;
        failure = failed;
        endedNanos = System.nanoTime();
    }

    @Override
    public String toString()
    {
        return desc + " #" + seq + (lane == Lane.COLLECTIVE ? "" : " " + lane.name().toLowerCase() + " peer " + peer);
    }
}
