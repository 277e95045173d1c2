package dev.hccl.core.mailbox;

import dev.hccl.api.Operation;
import dev.hccl.api.spi.OpDescriptor;

import java.util.HashMap;
import java.util.Map;

/**
 * The last-operation confirmation at close: each rank tells every peer the collectives it issued (their count, their
 * hash, and the last {@link FlowControl#CLOSING_ENTRIES} one by one), and waits for theirs, so that ranks that issued
 * different collectives learn it at close instead of never. A peer's record also tells a receive waiting for a
 * collective the peer never issued that it never completes. Thread-safe.
 */
public final class ClosingRecords
{
    /** What a peer said of its collectives when it closed. */
    public static final class Record
    {
        /** Collectives it issued. */
        public final long count;
        /** Their hash, in order. */
        public final long hash;
        /** Its last collectives by sequence number. */
        public final Map<Long, OpDescriptor> last = new HashMap<>();

        Record(final long count, final long hash)
        {
            this.count = count;
            this.hash = hash;
        }

        boolean complete()
        {
            return last.size() >= Math.min(count, FlowControl.CLOSING_ENTRIES);
        }
    }

    private final long commId;
    private final FlowControl flow;
    private final PeerStates peers;
    /** Guarded by this: each peer's record; null until it said. */
    private final Record[] records;
    /** Guarded by this: the communicator failed, and nobody waits for records any more. */
    private boolean stopped;

    ClosingRecords(final long commId, final FlowControl flow, final PeerStates peers, final int rootWorldSize)
    {
        this.commId = commId;
        this.flow = flow;
        this.peers = peers;
        records = new Record[rootWorldSize];
    }

    /**
     * Tells every peer the collectives this rank issued.
     *
     * @param globalPeers the peers, in the root communicator.
     * @param count       collectives issued.
     * @param hash        their hash, in order.
     * @param lastSeqs    the last ones' sequence numbers, oldest first (at most {@link FlowControl#CLOSING_ENTRIES}).
     * @param lastDescs   the last ones.
     */
    public void tell(
        final int[] globalPeers, final long count, final long hash, final long[] lastSeqs,
        final OpDescriptor[] lastDescs)
    {
        for (final int peer : globalPeers)
        {
            if (lastSeqs.length == 0)
            {
                flow.tellClosing(peer, commId, -1, null, count, hash);
            }
            for (int i = 0; i < lastSeqs.length; i++)
            {
                flow.tellClosing(peer, commId, lastSeqs[i], lastDescs[i], count, hash);
            }
        }
    }

    /**
     * One entry of a peer's record came (called by a transport thread).
     *
     * @param from  the peer, in the root communicator.
     * @param seq   the entry's sequence number, or negative for a record without entries.
     * @param desc  the entry's operation.
     * @param count collectives the peer issued.
     * @param hash  their hash.
     */
    synchronized void onEntry(final int from, final long seq, final OpDescriptor desc, final long count,
        final long hash)
    {
        Record r = records[from];
        if (r == null || r.count != count || r.hash != hash)
        {
            r = new Record(count, hash);
            records[from] = r;
        }
        if (seq >= 0 && r.last.size() < FlowControl.CLOSING_ENTRIES)
        {
            r.last.put(seq, desc);
        }
        notifyAll();
    }

    /**
     * How many collectives a peer said it issued.
     *
     * @param from the peer, in the root communicator.
     * @return the count, or -1 while it has not closed.
     */
    public synchronized long issuedBy(final int from)
    {
        return records[from] == null ? -1 : records[from].count;
    }

    /** Wakes a close waiting for records: a peer is gone, or (with {@code failed}) the communicator failed. */
    synchronized void wake(final boolean failed)
    {
        stopped |= failed;
        notifyAll();
    }

    /**
     * Waits until every peer has said what it issued, is gone, or the deadline passes, or the communicator fails.
     *
     * @param globalPeers   the peers, in the root communicator.
     * @param deadlineNanos when to stop waiting, by {@link System#nanoTime()}.
     * @return each peer's record, in the order given; null for a peer that is gone or did not say in time.
     */
    public synchronized Record[] await(final int[] globalPeers, final long deadlineNanos)
    {
        final Record[] got = new Record[globalPeers.length];
        try
        {
            while (true)
            {
                boolean waiting = false;
                for (int i = 0; i < globalPeers.length; i++)
                {
                    final Record r = records[globalPeers[i]];
                    got[i] = r != null && r.complete() ? r : null;
                    waiting |= got[i] == null && !peers.isGone(globalPeers[i]);
                }
                final long left = deadlineNanos - System.nanoTime();
                if (!waiting || stopped || left <= 0)
                {
                    return got;
                }
                wait(Math.max(1, Math.min(100, left / 1_000_000)));
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return got;
        }
    }

    /** Whether a receive is of a collective numbered beyond the {@code count} that its peer issued before closing. */
    static boolean neverSent(final PostedRecv recv, final long count)
    {
        final Operation op = recv.mine.operation();
        return count >= 0 && op != Operation.SEND && op != Operation.RECV && recv.seq >= count;
    }

    /**
     * Why a wait for a peer that closed after {@code count} collectives never ends.
     *
     * @param count what the peer issued.
     * @param seq   the collective waiting.
     * @return the reason, the peer written {@code {peer}}.
     */
    public static String closedWhileWaiting(final long count, final long seq)
    {
        return "{peer} closed its communicator after issuing " + count + " collectives, while this rank waits for " +
            "its data in collective #" + seq + ": every rank must issue the same collectives (did {peer} fail, or " +
            "leave a loop early?)";
    }
}
