package dev.hccl.api.spi;

/**
 * The I/O of a transport that has no threads of its own to do it: the thread that waits for a transfer performs the
 * I/O that completes it, as MPI's progress engine does. No thread hands a message to another on the way, which is
 * what a small message's latency is made of.
 * <p>
 * One thread at a time drives; the others' transfers are completed by the one that drives, so they wait as for a
 * transport with threads of its own. When no thread drives for a while, the transport drives itself, so that a dead
 * peer or an abort is noticed between operations too.
 */
public interface ProgressEngine
{
    /**
     * Makes the calling thread the one that performs I/O, when no other thread does; reentrant. A transport thread
     * that drives only while nobody else does gives way to the caller, which may wait a moment for it.
     *
     * @return true when the calling thread now drives and must call {@link #exit()}; false when another caller
     * drives.
     */
    boolean enter();

    /**
     * Gives driving back; one call for each {@link #enter()} that returned true.
     */
    void exit();

    /**
     * Performs the I/O and tasks that are ready; only while entered.
     *
     * @param waitNanos when nothing is ready, how long to wait in the kernel for something to be; 0 or less returns
     *                  at once.
     * @return how many I/O events and tasks ran: 0 when nothing was ready.
     */
    int poll(long waitNanos);

    /**
     * Whether {@link #poll(long)}'s wait ends as soon as I/O arrives (a selector), rather than after the time given
     * (a park: a transport in shared memory has nothing to wake it). A waiter sleeps long only in the first kind.
     *
     * @return true when a waiting poll wakes on arrival.
     */
    default boolean wakesOnArrival()
    {
        return true;
    }
}
