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

    /** The thread in each lane, or null; taken with a compare-and-set, given back with an ordered store. */
    private final AtomicReferenceArray<Thread> holders;
    /**
     * What each holder issues, written after it took the lane: only a message reads it, and may find it a moment
     * late (null, or the holder's previous operation).
     */
    private final AtomicReferenceArray<OpDescriptor> issuing;
    /** Entries of each lane's holder beyond the first; only the holding thread reads or writes its lane's. */
    private final int[] depth;

    /**
     * A guard for a communicator.
     *
     * @param worldSize its ranks.
     */
    IssueGuard(final int worldSize)
    {
        holders = new AtomicReferenceArray<>(1 + 2 * worldSize);
        issuing = new AtomicReferenceArray<>(1 + 2 * worldSize);
        depth = new int[1 + 2 * worldSize];
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
     * Takes a lane for the calling thread; allocates nothing unless another thread holds it.
     *
     * @param lane the lane.
     * @param desc the operation the thread issues.
     * @return null when taken; else who holds it: the calling thread must not issue.
     */
    Holder enter(final int lane, final OpDescriptor desc)
    {
        final Thread me = Thread.currentThread();
        final Thread held = holders.compareAndExchange(lane, null, me);
        if (held == null)
        {
            issuing.lazySet(lane, desc);
            return null;
        }
        if (held == me)
        {
            depth[lane]++;
            return null;
        }
        return new Holder(held, issuing.get(lane));
    }

    /**
     * Gives back a lane taken by {@link #enter}; by the thread that took it.
     *
     * @param lane the lane.
     */
    void exit(final int lane)
    {
        if (depth[lane] > 0)
        {
            depth[lane]--;
        }
        else
        {
            holders.lazySet(lane, null);
        }
    }

    /** A thread in a lane, and the operation it issues (null when not known yet), as a message names them. */
    static final class Holder
    {
        final Thread thread;
        final OpDescriptor desc;

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
