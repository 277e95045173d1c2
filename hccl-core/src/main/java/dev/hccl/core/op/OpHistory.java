package dev.hccl.core.op;

import dev.hccl.api.spi.OpDescriptor;

/**
 * The collectives this rank has issued in a communicator, as close() confirms them with the peers: how many, a hash
 * of all of them in order (from their wire codes, so equal on every JVM), and the last {@link #LAST} by sequence
 * number, to name the one that differs. Recorded under the issue lock.
 */
public final class OpHistory
{
    /** Operations close() names one by one. */
    static final int LAST = 4;

    private long count;
    private long hash = 0x6A09E667F3BCC908L;
    private final long[] lastSeq = new long[LAST];
    private final OpDescriptor[] lastDesc = new OpDescriptor[LAST];
    /** Read without the lock by a peer that asks where this rank is. */
    private volatile long lastIssued = -1;

    /**
     * A collective was issued.
     *
     * @param seq  its sequence number.
     * @param desc what it is.
     */
    synchronized void record(final long seq, final OpDescriptor desc)
    {
        lastSeq[(int)(count % LAST)] = seq;
        lastDesc[(int)(count % LAST)] = desc;
        count++;
        hash = Mix.finish(hash ^ fingerprint(desc));
        lastIssued = seq;
    }

    /**
     * @return the sequence number of the last collective issued, or -1 when none was.
     */
    public long lastIssued()
    {
        return lastIssued;
    }

    /**
     * @return collectives issued.
     */
    synchronized long count()
    {
        return count;
    }

    /**
     * @return the hash of every collective issued, in order.
     */
    synchronized long hash()
    {
        return hash;
    }

    /**
     * The last collectives issued, oldest first.
     *
     * @return their sequence numbers and descriptors, at most {@link #LAST}.
     */
    synchronized Entry[] last()
    {
        final int n = (int)Math.min(count, LAST);
        final Entry[] entries = new Entry[n];
        for (int i = 0; i < n; i++)
        {
            final int slot = (int)((count - n + i) % LAST);
            entries[i] = new Entry(lastSeq[slot], lastDesc[slot]);
        }
        return entries;
    }

    /** A collective: its sequence number and what it was. */
    record Entry(long seq, OpDescriptor desc)
    {
    }

    /**
     * The descriptor's wire fields, mixed: the same on every JVM, unlike enum hash codes.
     *
     * @param d the operation.
     * @return its fingerprint.
     */
    public static long fingerprint(final OpDescriptor d)
    {
        long h = d.operation().code();
        h = h * 31 + (d.dataType() == null ? -1 : d.dataType().code());
        h = h * 31 + (d.reduceOp() == null ? -1 : d.reduceOp().code());
        h = h * 31 + d.root();
        return Mix.finish(h * 31 + d.count());
    }
}
