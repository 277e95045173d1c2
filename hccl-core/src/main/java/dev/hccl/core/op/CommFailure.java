package dev.hccl.core.op;

import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.NodeArena;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import dev.hccl.core.mailbox.Fault;
import dev.hccl.core.mailbox.FaultListener;
import dev.hccl.core.mailbox.Mailbox;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * A communicator's failure state: set once, marked in the node arena and told to every peer before anything here
 * wakes, then given to every posted receive and every wait in progress; {@code close} waits until the peers have been
 * told. It is also where the mailbox's faults become the user's {@link HcclException}: the peer in this communicator's
 * numbering, the operation running and its sequence number, the transport's exception as cause.
 */
public final class CommFailure implements FaultListener
{
    private static final Logger LOG = LoggerFactory.getLogger(CommFailure.class);

    private final int rank;
    private final long commId;
    private final RankNumbering numbering;
    private final IntFunction<Link> links;
    private final Mailbox mailbox;
    private final NodeArena arena;
    private final Whereabouts whereabouts;
    private final OpListener listener;
    private volatile HcclException failure;
    /** Whether the failure passes a peer's own on; set with it. */
    private volatile boolean relayed;
    /** Whether an operation has carried the failure to the caller; close() reports it otherwise. */
    private volatile boolean reported;
    /** Open until the peers have been told. */
    private final CountDownLatch peersTold = new CountDownLatch(1);

    /**
     * @param rank        this rank.
     * @param commId      the communicator's id, which the ABORT names.
     * @param numbering   the communicator's ranks in the root communicator and back.
     * @param links       the link to each rank of the communicator.
     * @param mailbox     the communicator's receives.
     * @param arena       the communicator's node arena, or null.
     * @param whereabouts the operation running and the waits in progress, which fail with the communicator.
     * @param listener    told of the failure, once the peers and the waits have been.
     */
    public CommFailure(
        final int rank, final long commId, final RankNumbering numbering, final IntFunction<Link> links,
        final Mailbox mailbox, final NodeArena arena, final Whereabouts whereabouts, final OpListener listener)
    {
        this.rank = rank;
        this.commId = commId;
        this.numbering = numbering;
        this.links = links;
        this.mailbox = mailbox;
        this.arena = arena;
        this.whereabouts = whereabouts;
        this.listener = listener;
    }

    /**
     * @return the failure, or null while the communicator works.
     */
    public HcclException get()
    {
        return failure;
    }

    /**
     * @return whether the failure passes a peer's own on (its ABORT): the peer's is the root cause.
     */
    public boolean relayed()
    {
        return relayed;
    }

    /**
     * Fails the communicator, once: the peers are told, then the mailbox fails every posted receive, then every wait.
     *
     * @param cause the failure.
     * @return the communicator's failure: {@code cause}, or the earlier one.
     */
    public HcclException fail(final HcclException cause)
    {
        return fail(cause, false, true);
    }

    /**
     * Fails the communicator from within an operation, which carries the failure to its caller.
     *
     * @param cause the failure.
     * @return the communicator's failure: {@code cause}, or the earlier one.
     */
    public HcclException failInOperation(final HcclException cause)
    {
        final HcclException f = fail(cause);
        reported = true;
        return f;
    }

    /**
     * {@inheritDoc}
     * <p>
     * The mailbox's fault in the user's terms (see {@link #inUsersTerms}). The mailbox fails its receives itself, once
     * this returns.
     */
    @Override
    public HcclException onFault(final Fault fault)
    {
        return fail(inUsersTerms(fault, whereabouts.running()), fault.relayed(), false);
    }

    /**
     * A transfer of an operation ended in failure: the communicator's own failure passes as it is; a transport's
     * becomes a {@link Fault}, as the mailbox's do, and then the user's exception in the same way, and fails the
     * communicator.
     *
     * @param op      the operation.
     * @param request its transfer, failed.
     * @return the communicator's failure, for the operation to throw.
     */
    public HcclException transferFailed(final OpRecord op, final Request request)
    {
        final Throwable thrown = request.failure();
        final HcclException known = failure;
        if (thrown == known)
        {
            return failInOperation(known);
        }
        final String transfer = (request.isSend() ? "send to {peer}" : "recv from {peer}") + " tag " +
            Tags.describe(request.tag());
        return failInOperation(
            inUsersTerms(Fault.ofTransfer(numbering.global(request.peer()), transfer, thrown), op));
    }

    /**
     * The one place where what the wire reported becomes the user's exception: this rank, the peer in this
     * communicator's numbering, the operation and its sequence number, the fault's words with the peer named, the
     * transport's exception as cause.
     */
    private HcclException inUsersTerms(final Fault fault, final OpRecord op)
    {
        final int globalPeer = fault.globalPeer();
        final int peer = numbering.rankOf(globalPeer);
        final String text = fault.message().replace("{peer}", peer >= 0 ? "rank " + peer :
            globalPeer >= 0 ? "global rank " + globalPeer : "a peer");
        return new HcclException(fault.code(), rank, peer >= 0 ? peer : HcclException.UNKNOWN_RANK,
            op == null ? null : op.desc().operation(), op == null ? HcclException.NO_SEQUENCE : op.seq(), text,
            fault.cause());
    }

    /**
     * @param failMailbox whether to fail the mailbox's receives here; false when the mailbox reported the fault and
     *                    fails them itself on return.
     */
    private HcclException fail(final HcclException cause, final boolean relayed, final boolean failMailbox)
    {
        final boolean first = failOnce(cause, relayed, failMailbox);
        final HcclException f = failure;
        whereabouts.failWaits(f);
        if (first)
        {
            listener.failed(f, relayed);
        }
        return f;
    }

    /**
     * Sets the failure, tells the peers and fails the receives (unless the mailbox that reported it fails them on
     * return); the first cause stands.
     *
     * @return whether this call set it.
     */
    private boolean failOnce(final HcclException cause, final boolean relayed, final boolean failMailbox)
    {
        synchronized (this)
        {
            if (failure != null)
            {
                return false;
            }
            this.relayed = relayed;
            failure = cause;
        }
        LOG.error("communicator failed: {}", cause.getMessage());
        // Tell the peers before waking anything here: a woken operation may close the communicator, and its goodbye
        // must not reach a peer before the reason does. The arena first: a peer that reads what an operation posted
        // there before failing here would complete that operation, before the reason reached it.
        try
        {
            if (null != arena)
            {
                arena.markFailed();
            }
            for (int peer = 0; peer < numbering.size(); peer++)
            {
                if (peer != rank)
                {
                    try
                    {
                        links.apply(peer).abort(commId, cause.getMessage());
                    }
                    catch (final RuntimeException ex)
                    {
                        LOG.debug("could not tell rank {} of the failure: {}", peer, ex.toString());
                    }
                }
            }
        }
        finally
        {
            peersTold.countDown();
        }
        if (failMailbox)
        {
            mailbox.fail(cause);
        }
        return true;
    }

    /**
     * @return the failure when no operation has carried it to the caller (it came after the last one), else null.
     */
    public HcclException unreported()
    {
        return reported ? null : failure;
    }

    /**
     * When failed, waits until the peers have been told, so that closing does not say goodbye before the reason.
     *
     * @param millis the longest wait.
     */
    public void awaitPeersTold(final long millis)
    {
        if (failure == null)
        {
            return;
        }
        try
        {
            peersTold.await(millis, TimeUnit.MILLISECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
