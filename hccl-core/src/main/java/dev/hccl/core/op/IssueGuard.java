package dev.hccl.core.op;

import dev.hccl.api.spi.OpDescriptor;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Catches two threads issuing on one communicator at once. The order of their operations would then be decided by a
 * race, differently on each rank, and operations of one size would mix their data without any error.
 * <p>
 * A lane is what one series of sequence numbers orders: the collectives, or the sends to one peer, or the receives
 * from one peer. A call holds its lane from entry until it returns: an asynchronous call while it numbers and queues
 * its operation, a blocking call until its operation completes, since no other thread can tell when inside it the
 * operation was numbered. A thread may enter a lane it holds (an array convenience calls the buffer form).
 */
final class IssueGuard
{
    /** The collectives' lane. */
    static final int COLLECTIVES = 0;

    private final AtomicReferenceArray<Holder> lanes;

    /**
     * A guard for a communicator.
     *
     * @param worldSize its ranks.
     */
    IssueGuard(final int worldSize)
    {
        lanes = new AtomicReferenceArray<>(1 + 2 * worldSize);
    }

    /**
     * The lane of point-to-point operations with a peer.
     *
     * @param peer the peer.
     * @param send true for sends to it, false for receives from it.
     * @return the lane.
     */
    static int pointToPoint(final int peer, final boolean send)
    {
        return 1 + 2 * peer + (send ? 0 : 1);
    }

    /**
     * Takes a lane for the calling thread.
     *
     * @param lane the lane.
     * @param desc the operation the thread issues.
     * @return null when taken; else who holds it: the calling thread must not issue.
     */
    Holder enter(final int lane, final OpDescriptor desc)
    {
        final Thread me = Thread.currentThread();
        final Holder held = lanes.compareAndExchange(lane, null, new Holder(me, desc));
        if (held == null)
        {
            return null;
        }
        if (held.thread == me)
        {
            held.depth++;
            return null;
        }
        return held;
    }

    /**
     * Gives back a lane taken by {@link #enter}; by the thread that took it.
     *
     * @param lane the lane.
     */
    void exit(final int lane)
    {
        final Holder held = lanes.get(lane);
        if (held.depth > 0)
        {
            held.depth--;
        }
        else
        {
            lanes.set(lane, null);
        }
    }

    /** A thread in a lane, and the operation it issues. */
    static final class Holder
    {
        final Thread thread;
        final OpDescriptor desc;
        /** Entries beyond the first; only the holding thread reads or writes it. */
        int depth;

        Holder(final Thread thread, final OpDescriptor desc)
        {
            this.thread = thread;
            this.desc = desc;
        }

        /**
         * The thread, as a message names it.
         *
         * @param thread a thread.
         * @return its name and id.
         */
        static String name(final Thread thread)
        {
            return "thread \"" + thread.getName() + "\" (id " + thread.getId() + ")";
        }
    }
}
