package dev.hccl.core;

import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Link;
import dev.hccl.core.mailbox.Mailbox;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * A communicator's failure: set once, told to every peer before anything here wakes, then given to every posted
 * receive; {@code close} waits until the peers have been told.
 */
final class CommFailure
{
    private static final Logger LOG = LoggerFactory.getLogger(CommFailure.class);

    private final int rank;
    private final int size;
    private final long commId;
    private final IntFunction<Link> links;
    private final Mailbox mailbox;
    private volatile HcclException failure;
    /** Whether the failure passes a peer's own on; set with it. */
    private volatile boolean relayed;
    /** Whether an operation has carried the failure to the caller; close() reports it otherwise. */
    private volatile boolean reported;
    /** Open until the peers have been told. */
    private final CountDownLatch peersTold = new CountDownLatch(1);

    /**
     * @param rank    this rank.
     * @param size    the communicator's size.
     * @param commId  the communicator's id, which the ABORT names.
     * @param links   the link to each rank of the communicator.
     * @param mailbox the communicator's receives.
     */
    CommFailure(final int rank, final int size, final long commId, final IntFunction<Link> links, final Mailbox mailbox)
    {
        this.rank = rank;
        this.size = size;
        this.commId = commId;
        this.links = links;
        this.mailbox = mailbox;
    }

    /**
     * @return the failure, or null while the communicator works.
     */
    HcclException get()
    {
        return failure;
    }

    /**
     * @return whether the failure passes a peer's own on (its ABORT): the peer's is the root cause.
     */
    boolean relayed()
    {
        return relayed;
    }

    /**
     * Fails the communicator, once: the peers are told, then the mailbox fails every posted receive.
     *
     * @param cause   the failure.
     * @param relayed whether it passes a peer's own failure on.
     * @return the communicator's failure: {@code cause}, or the earlier one.
     */
    HcclException fail(final HcclException cause, final boolean relayed)
    {
        synchronized (this)
        {
            if (failure != null)
            {
                return failure;
            }
            this.relayed = relayed;
            failure = cause;
        }
        LOG.error("communicator failed: {}", cause.getMessage());
        // Tell the peers before waking anything here: a woken operation may close the communicator, and its goodbye
        // must not reach a peer before the reason does.
        try
        {
            for (int peer = 0; peer < size; peer++)
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
        mailbox.fail(cause);
        return cause;
    }

    /**
     * An operation carries the failure to its caller.
     */
    void reported()
    {
        reported = true;
    }

    /**
     * @return the failure when no operation has carried it to the caller (it came after the last one), else null.
     */
    HcclException unreported()
    {
        return reported ? null : failure;
    }

    /**
     * When failed, waits until the peers have been told, so that closing does not say goodbye before the reason.
     *
     * @param millis the longest wait.
     */
    void awaitPeersTold(final long millis)
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
