package dev.hccl.core.mailbox;

import dev.hccl.api.HcclException;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Carries a mailbox's faults to its communicator. A mailbox may take messages, and find faults, before its
 * communicator exists (a peer that finished a {@code split} first): those are kept until {@link #attach}, which also
 * reports the members that were lost meanwhile. After that, faults of ranks outside the communicator are not its
 * business. Thread-safe; the listener is called outside the lock. The mailbox fails its receives with what the
 * listener returns, after the listener has told the peers.
 */
final class FaultFanout
{
    private final PeerStates peers;
    /** The mailbox's own failure, given what the listener made of a fault. */
    private final Consumer<HcclException> failMailbox;
    /** Guarded by this: the communicator's ranks, in the root communicator; null until attached. */
    private boolean[] members;
    /** Guarded by this. */
    private FaultListener listener;
    /** Guarded by this: faults found before the communicator attached. */
    private final ArrayList<Fault> early = new ArrayList<>();
    /** Guarded by this: the members whose departure was reported, each once; null until attached. */
    private boolean[] departureReported;

    /**
     * @param peers       which peers are gone, and how.
     * @param failMailbox fails the mailbox's receives with the communicator's failure.
     */
    FaultFanout(final PeerStates peers, final Consumer<HcclException> failMailbox)
    {
        this.peers = peers;
        this.failMailbox = failMailbox;
    }

    /**
     * Binds to the communicator: faults go to {@code listener} from now on, with those found before and a fault for
     * each member lost meanwhile.
     *
     * @param memberGlobalRanks the communicator's ranks, in the root communicator.
     * @param rootWorldSize     ranks of the root communicator.
     * @param listener          told of faults.
     */
    void attach(final int[] memberGlobalRanks, final int rootWorldSize, final FaultListener listener)
    {
        final List<Fault> replay;
        final boolean[] m = new boolean[rootWorldSize];
        for (final int g : memberGlobalRanks)
        {
            m[g] = true;
        }
        synchronized (this)
        {
            members = m;
            departureReported = new boolean[rootWorldSize];
            this.listener = listener;
            replay = new ArrayList<>(early);
            early.clear();
            // Under this lock, as reportDeparture marks what it reports: a member's departure is reported once.
            for (int g = 0; g < rootWorldSize; g++)
            {
                final PeerStates.Departure d = peers.departure(g);
                if (d != null && m[g] && !d.orderly())
                {
                    departureReported[g] = true;
                    replay.add(new Fault(d.code(), g, "{peer} " + d.reason(), d.cause(), false));
                }
            }
        }
        for (final Fault fault : replay)
        {
            if (fault.globalPeer() < 0 || m[fault.globalPeer()])
            {
                failMailbox.accept(listener.onFault(fault));
            }
        }
    }

    /**
     * Reports a member's departure, once: after {@link #attach}, which reports the departures before it itself.
     *
     * @param globalPeer the member that left, in the root communicator.
     * @param fault      the fault it causes here.
     */
    void reportDeparture(final int globalPeer, final Fault fault)
    {
        final FaultListener l;
        synchronized (this)
        {
            if (members == null || !members[globalPeer] || departureReported[globalPeer])
            {
                return;
            }
            departureReported[globalPeer] = true;
            l = listener;
        }
        failMailbox.accept(l.onFault(fault));
    }

    /**
     * Whether a rank is known not to be of the communicator.
     *
     * @param globalPeer the rank, in the root communicator.
     * @return false before {@link #attach}.
     */
    synchronized boolean isOutsider(final int globalPeer)
    {
        return members != null && !members[globalPeer];
    }

    /**
     * Reports a fault, or keeps it until the communicator attaches.
     *
     * @param fault the fault.
     */
    void report(final Fault fault)
    {
        final FaultListener l;
        synchronized (this)
        {
            l = listener;
            if (l == null)
            {
                early.add(fault);
                return;
            }
        }
        failMailbox.accept(l.onFault(fault));
    }
}
