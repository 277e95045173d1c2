package dev.hccl.transport.shm;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.LinkState;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import static dev.hccl.api.spi.LinkState.CLOSED;
import static dev.hccl.api.spi.LinkState.FAILED;
import static dev.hccl.api.spi.LinkState.OPEN;
import static dev.hccl.api.spi.LinkState.PEER_CLOSED;

/**
 * The sending side of the connection to one peer: writes this rank's messages into the ring the peer reads, and
 * holds the connection's state.
 * <p>
 * A send copies the payload straight from the caller's buffer into claimed ring space, with no staging copy. Under
 * the link's lock it joins the link's queue and as much is written as fits; the engine's polls write the rest as the
 * peer frees space, so the peer consumes the first chunks while later ones are written. The queue holds only this
 * rank's own sends; the ring bounds everything else. A request completes once its whole payload is in the ring;
 * messages to one peer keep their order.
 * <p>
 * The link is OPEN until exactly one of: it fails ({@link #fail}: the peer died, a protocol error), the peer says
 * GOODBYE, or this side closes it. The state changes under the lock, and memory is written only under the lock
 * while OPEN: once a closer has seen the link leave OPEN under the lock, no thread writes through it again.
 */
final class ShmLink implements Link
{
    private static final Logger LOG = LoggerFactory.getLogger(ShmLink.class);

    private final int rank;
    private final int peer;
    /** The pair's segment, named when its memory faults. */
    private final ShmSegment segment;
    private final OneToOneRingBuffer ring;
    private final int chunkBytes;
    /** The CRC32C of each DATA chunk ({@code HCCL_CHECKSUM}), or null for none. */
    private final ShmChecksum checksum;
    private final int abortReasonMaxBytes;
    private final ReentrantLock lock = new ReentrantLock();
    // Guarded by lock.
    private final ArrayDeque<ShmOutgoing> queue = new ArrayDeque<>();
    /** A finished entry kept for the next send, so that a send that fits at once allocates nothing. */
    private ShmOutgoing spare;
    /** How many entries the queue holds: read without the lock so that an idle link costs the engine no locking. */
    private volatile int queued;
    private volatile int state = OPEN;
    private volatile Throwable failure;
    /** A failure not yet reported to the communicator: the engine reports it, so that callbacks stay on its thread. */
    private final AtomicReference<Throwable> unreported = new AtomicReference<>();
    /** The watch's finding that the peer is dead, until the engine has read what the peer wrote before it died. */
    private final AtomicReference<Throwable> deathNotice = new AtomicReference<>();

    /**
     * The link to a peer.
     *
     * @param rank     this rank.
     * @param peer     the peer.
     * @param segment  the pair's segment.
     * @param ring     the ring this rank writes.
     * @param checksum the CRC32C over that ring's memory that ends each DATA record, or null for none.
     */
    ShmLink(
        final int rank, final int peer, final ShmSegment segment, final OneToOneRingBuffer ring,
        final ShmChecksum checksum)
    {
        this.rank = rank;
        this.peer = peer;
        this.segment = segment;
        this.ring = ring;
        this.checksum = checksum;
        this.chunkBytes = ShmRecords.chunkBytes(ring, null != checksum);
        this.abortReasonMaxBytes = ShmRecords.abortReasonMaxBytes(ring);
    }

    /**
     * {@inheritDoc}
     */
    @Override
    public int peer()
    {
        return peer;
    }

    /**
     * {@inheritDoc}
     * <p>
     * The age of the heartbeat the peer writes, as the consumer of this rank's ring, into its trailer.
     */
    @Override
    public long silentMillis()
    {
        return Math.max(0, System.currentTimeMillis() - ring.consumerHeartbeatTime());
    }

    /**
     * {@inheritDoc}
     * <p>
     * Copies the payload into the shared ring, as much as fits now and the rest as the engine is polled;
     * {@code done} completes when the last byte is in the ring. Fails {@code done} at once, touching no memory, on a
     * link that is not open.
     */
    @Override
    public void send(
        final long commId,
        final long seq,
        final long tag,
        final OpDescriptor desc,
        final ByteBuffer payload,
        final Request done)
    {
        Objects.requireNonNull(desc, "desc");
        Objects.requireNonNull(payload, "payload");
        if (OPEN != state)
        {
            done.fail(notOpen());
            return;
        }
        lock.lock();
        try
        {
            if (OPEN != state)
            {
                done.fail(notOpen());
                return;
            }
            ShmOutgoing o = spare;
            spare = null;
            if (null == o)
            {
                o = new ShmOutgoing();
            }
            o.message(commId, seq, tag, desc, payload, done);
            queue.addLast(o);
            queued = queue.size();
            flushLocked();
        }
        catch (final Throwable t)
        {
            fail(sendFailure(t));
            done.fail(notOpen());
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * Best effort: dropped unless the link is open; queued behind this rank's earlier sends; the reason is cut to
     * what one record carries.
     */
    @Override
    public void abort(final long commId, final String reason)
    {
        if (OPEN != state)
        {
            return;
        }
        byte[] bytes = (null == reason ? "" : reason).getBytes(StandardCharsets.UTF_8);
        if (bytes.length > abortReasonMaxBytes)
        {
            final byte[] cut = new byte[abortReasonMaxBytes];
            System.arraycopy(bytes, 0, cut, 0, cut.length);
            bytes = cut;
        }
        lock.lock();
        try
        {
            if (OPEN != state)
            {
                return;
            }
            final ShmOutgoing o = new ShmOutgoing();
            o.abort(commId, bytes);
            queue.addLast(o);
            queued = queue.size();
            flushLocked();
        }
        catch (final Throwable t)
        {
            LOG.debug("rank {}: could not send ABORT to rank {}", rank, peer, t);
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Writes what fits of the queued sends; for the engine, which must never wait for a sender, so it gives up when
     * the lock is busy (its holder writes meanwhile).
     *
     * @return how many records were written.
     */
    int flush()
    {
        if (0 == queued || OPEN != state || !lock.tryLock())
        {
            return 0;
        }
        try
        {
            return OPEN == state ? flushLocked() : 0;
        }
        catch (final Throwable t)
        {
            fail(sendFailure(t));
            return 0;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** What a throwable from writing the ring means: the segment was truncated (its memory faulted), or a bug. */
    private Throwable sendFailure(final Throwable t)
    {
        final HcclException truncated = ShmDamage.truncated(rank, peer, segment, "sending to rank " + peer, t);
        if (null != truncated)
        {
            return truncated;
        }
        LOG.error("rank {}: internal error sending to rank {}", rank, peer, t);
        return new IllegalStateException("internal error sending to rank " + peer + ": " + t, t);
    }

    private int flushLocked()
    {
        int records = 0;
        ShmOutgoing o;
        while (null != (o = queue.peekFirst()))
        {
            records += o.writeTo(ring, chunkBytes, checksum);
            if (!o.finished())
            {
                break;
            }
            queue.pollFirst();
            queued = queue.size();
            final Request done = o.done();
            final boolean reusable = o.isMessage();
            o.clear();
            if (reusable)
            {
                spare = o;
            }
            if (null != done)
            {
                done.complete();
            }
        }
        return records;
    }

    /**
     * The link failed: from now on sends fail, queued ones at once, and the failure awaits the engine to report it.
     * The first failure wins.
     *
     * @param cause what happened.
     * @return true when this call failed the link, false when it was not open.
     */
    boolean fail(final Throwable cause)
    {
        lock.lock();
        try
        {
            if (OPEN != state)
            {
                return false;
            }
            failure = cause;
            state = FAILED;
            failQueueLocked();
            unreported.set(cause);
            return true;
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * The watch found the peer dead. The link fails once the engine has read what the peer wrote before: a peer that
     * said GOODBYE and then exited has closed in good order, and messages it completed are delivered.
     *
     * @param cause how the peer was found dead; the first finding counts.
     */
    void noticeDeath(final Throwable cause)
    {
        deathNotice.compareAndSet(null, cause);
    }

    /**
     * The watch's finding.
     *
     * @return how the peer was found dead, or null.
     */
    Throwable deathNotice()
    {
        return deathNotice.get();
    }

    /**
     * The peer said GOODBYE: sends fail from now on.
     *
     * @return true when the link was open.
     */
    boolean peerClosed()
    {
        lock.lock();
        try
        {
            if (OPEN != state)
            {
                return false;
            }
            state = PEER_CLOSED;
            failQueueLocked();
            return true;
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Takes the failure that the communicator has not been told of yet.
     *
     * @return the cause, once; null otherwise.
     */
    Throwable takeUnreported()
    {
        return null == unreported.get() ? null : unreported.getAndSet(null);
    }

    /**
     * Whether the link is open.
     *
     * @return true until it fails or either side closes.
     */
    boolean isOpen()
    {
        return OPEN == state;
    }

    /**
     * Closes this side: writes what fits of the queue, fails the rest, and says GOODBYE when the link was open,
     * retrying while the ring is full until {@code deadlineNanos}. Afterwards no thread writes through the link.
     *
     * @param deadlineNanos when to stop trying, as {@link System#nanoTime()}.
     * @param lockWaitNanos how long to wait for a sender that holds the lock.
     * @return true when the lock was had, so that no thread writes through the link any more; false when a thread
     * held it too long (the memory must then stay mapped).
     */
    boolean close(final long deadlineNanos, final long lockWaitNanos)
    {
        try
        {
            if (!lock.tryLock(lockWaitNanos, TimeUnit.NANOSECONDS))
            {
                return false;
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
        try
        {
            final int previous = state;
            if (OPEN == previous)
            {
                try
                {
                    flushLocked();
                }
                catch (final Throwable t)
                {
                    LOG.debug("rank {}: flushing to rank {} on close", rank, peer, t);
                }
            }
            state = CLOSED;
            failQueueLocked();
            if (OPEN == previous)
            {
                goodbyeLocked(deadlineNanos);
            }
            return true;
        }
        finally
        {
            lock.unlock();
        }
    }

    private void goodbyeLocked(final long deadlineNanos)
    {
        try
        {
            while (true)
            {
                final int index = ring.tryClaim(ShmRecords.GOODBYE, 0);
                if (index >= 0)
                {
                    ring.commit(index);
                    return;
                }
                if (System.nanoTime() - deadlineNanos >= 0)
                {
                    LOG.debug("rank {}: no room for GOODBYE to rank {}: it will notice the missing heartbeat",
                        rank, peer);
                    return;
                }
                LockSupport.parkNanos(50_000);
            }
        }
        catch (final Throwable t)
        {
            LOG.debug("rank {}: could not say GOODBYE to rank {}", rank, peer, t);
        }
    }

    private void failQueueLocked()
    {
        ShmOutgoing o;
        while (null != (o = queue.pollFirst()))
        {
            final Request done = o.done();
            o.clear();
            if (null != done)
            {
                done.fail(notOpen());
            }
        }
        queued = 0;
    }

    /** The error of a send on a link that is not open: the failure's code when it has one (a damaged segment). */
    private HcclException notOpen()
    {
        final Throwable failure = this.failure;
        return new HcclException(
            failure instanceof HcclException ? ((HcclException)failure).errorCode() : ErrorCode.E_REMOTE,
            rank, peer, null, HcclException.NO_SEQUENCE,
            "cannot send to rank " + peer + " over shared memory: " + LinkState.whyNotOpen(state, peer, failure),
            failure);
    }

    @Override
    public String toString()
    {
        return "ShmLink{rank " + rank + " -> rank " + peer + ", state " + state + "}";
    }
}
