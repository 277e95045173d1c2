package dev.hccl.core.op;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.core.mailbox.ClosingRecords;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * close() confirms with the peers that every rank issued the same collectives: each tells every other how many it
 * issued, their hash in order, and the last {@link OpHistory#LAST} one by one, then waits for theirs. A disagreement
 * that no message revealed (a broadcast whose ranks disagree on the root finishes on every rank that only sends) is
 * thus an {@code E_MISMATCH} from close() naming the operation, never silent. Ranks as threads, which one thread may
 * close one after another, do not wait: their records arrive before the send returns, so the last to close compares.
 */
public final class CloseConfirmation
{
    private static final Logger LOG = LoggerFactory.getLogger(CloseConfirmation.class);

    private CloseConfirmation()
    {
    }

    /**
     * Tells the peers, waits for them, compares.
     *
     * @param rank        this rank.
     * @param numbering   the communicator's ranks in the root communicator.
     * @param history     the collectives this rank issued, all completed.
     * @param closings    the communicator's closing records.
     * @param waitNanos   how long to wait for the peers' records (0 for ranks that are threads: they have closed).
     * @param failures    the communicator's failure state: a failed one does not warn of peers that did not answer.
     * @return the disagreement, or null when every peer that answered issued the same collectives.
     */
    public static HcclException confirm(
        final int rank, final RankNumbering numbering, final OpHistory history, final ClosingRecords closings,
        final long waitNanos, final CommFailure failures)
    {
        final int n = numbering.size();
        if (n == 1)
        {
            return null;
        }
        final int[] peers = new int[n - 1];
        final int[] peerRanks = new int[n - 1];
        for (int r = 0, i = 0; r < n; r++)
        {
            if (r != rank)
            {
                peerRanks[i] = r;
                peers[i++] = numbering.global(r);
            }
        }
        final long count = history.count();
        final long hash = history.hash();
        final OpHistory.Entry[] last = history.last();
        final long[] seqs = new long[last.length];
        final OpDescriptor[] descs = new OpDescriptor[last.length];
        for (int i = 0; i < last.length; i++)
        {
            seqs[i] = last[i].seq();
            descs[i] = last[i].desc();
        }
        closings.tell(peers, count, hash, seqs, descs);
        final ClosingRecords.Record[] records = closings.await(peers, System.nanoTime() + waitNanos);
        final List<Integer> unconfirmed = new ArrayList<>();
        for (int i = 0; i < records.length; i++)
        {
            final ClosingRecords.Record theirs = records[i];
            if (theirs == null)
            {
                unconfirmed.add(peerRanks[i]);
                continue;
            }
            if (theirs.count == count && theirs.hash == hash)
            {
                continue;
            }
            final HcclException ex = new HcclException(ErrorCode.E_MISMATCH, rank, peerRanks[i], null,
                HcclException.NO_SEQUENCE, "close() found that the ranks did not issue the same collectives: " +
                difference(peerRanks[i], theirs, count, last) + "; every rank must issue the same collectives in " +
                "the same order (a broadcast or reduce whose ranks disagree on the root completes without an error " +
                "on the ranks that only send)", null);
            LOG.error("rank {}: {}", rank, ex.getMessage());
            return ex;
        }
        if (!unconfirmed.isEmpty() && waitNanos > 0 && failures.get() == null)
        {
            LOG.warn("rank {}: ranks {} did not confirm their collectives at close() within HCCL_CONNECT_TIMEOUT " +
                "({} s): they are gone, or do not close this communicator", rank, unconfirmed,
                waitNanos / 1_000_000_000);
        }
        return null;
    }

    /** Names the first collective that differs, or else how the counts do. */
    private static String difference(
        final int peer, final ClosingRecords.Record theirs, final long count, final OpHistory.Entry[] last)
    {
        for (final OpHistory.Entry mine : last)
        {
            final OpDescriptor other = theirs.last.get(mine.seq());
            if (other != null && !other.equals(mine.desc()))
            {
                return "operation mismatch at #" + mine.seq() + ": rank " + peer + " issued " + other +
                    " while this rank issued " + mine.desc();
            }
        }
        if (theirs.count != count)
        {
            return "rank " + peer + " issued " + theirs.count + " collectives and this rank " + count;
        }
        final long before = last.length == 0 ? 0 : last[0].seq();
        return "rank " + peer + " issued different collectives from this rank's before #" + before;
    }
}
