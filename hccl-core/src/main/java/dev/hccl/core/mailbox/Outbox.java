package dev.hccl.core.mailbox;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;

/**
 * The sending side of one communicator: each message goes eagerly when its receiver's budget has room for it, else
 * by rendezvous ({@link FlowControl}), held here until the receiver's clear to send comes. Held messages fail with
 * the communicator; a message to a peer that is gone fails, and fails the communicator naming the peer.
 * Thread-safe; messages are sent outside the lock, since an in-JVM peer answers on this thread.
 */
public final class Outbox
{
    private final long commId;
    private final FlowControl flow;
    /** Sends whose request to send is out, by receiver: each waits for its clear to send. */
    private final ArrayList<PendingSend>[] awaitingCts;
    /** Sends whose request to send waits until fewer than {@link FlowControl#MAX_RTS_IN_FLIGHT} are out. */
    private final ArrayDeque<PendingSend>[] heldBack;
    private final PeerStates peers;
    private final FaultFanout faults;
    private HcclException failure;

    @SuppressWarnings("unchecked")
    Outbox(final long commId, final int rootWorldSize, final FlowControl flow, final PeerStates peers,
        final FaultFanout faults)
    {
        this.commId = commId;
        this.flow = flow;
        awaitingCts = new ArrayList[rootWorldSize];
        heldBack = new ArrayDeque[rootWorldSize];
        this.peers = peers;
        this.faults = faults;
        for (int i = 0; i < rootWorldSize; i++)
        {
            awaitingCts[i] = new ArrayList<>();
            heldBack[i] = new ArrayDeque<>();
        }
    }

    /**
     * Sends a message, eagerly or by rendezvous.
     *
     * @param to      the receiver, in the root communicator.
     * @param seq     the sequence number.
     * @param tag     the tag.
     * @param desc    this rank's operation.
     * @param payload the bytes, from position to limit; not modified, and not to be reused until {@code done}.
     * @param done    completes when the payload may be reused; fails at once if the communicator has failed or the
     *                receiver is gone.
     */
    public void send(
        final int to, final long seq, final long tag, final OpDescriptor desc, final ByteBuffer payload,
        final Request done)
    {
        final int length = payload.remaining();
        if (flow.tryAcquire(to, FlowControl.cost(length)))
        {
            flow.send(to, commId, seq, tag, desc, payload, done);
            return;
        }
        final boolean ask;
        final PeerStates.Departure gone;
        synchronized (this)
        {
            if (failure != null)
            {
                done.fail(failure);
                return;
            }
            gone = peers.departure(to);
            if (gone == null)
            {
                final PendingSend p = new PendingSend(seq, tag, desc, payload, done);
                ask = awaitingCts[to].size() < FlowControl.MAX_RTS_IN_FLIGHT;
                if (ask)
                {
                    awaitingCts[to].add(p);
                }
                else
                {
                    heldBack[to].addLast(p);
                }
            }
            else
            {
                ask = false;
            }
        }
        if (gone != null)
        {
            final String problem = "{peer} is gone (" + gone.reason() + ") and this rank still sends to it";
            faults.report(new Fault(ErrorCode.E_REMOTE, to, problem, gone.cause(), false));
            done.fail(failed(problem, gone.cause()));
        }
        else if (ask)
        {
            flow.requestToSend(to, commId, seq, tag, desc, length);
        }
    }

    /**
     * The receiver of a message sent by rendezvous has posted its receive: the payload goes, and the next request to
     * send held back, if any (called by a transport thread).
     *
     * @param from the receiver, in the root communicator.
     * @param seq  the message's sequence number.
     * @param tag  the message's tag.
     */
    void onClearToSend(final int from, final long seq, final long tag)
    {
        PendingSend go = null;
        PendingSend next = null;
        synchronized (this)
        {
            final ArrayList<PendingSend> waiting = awaitingCts[from];
            for (int i = 0, n = waiting.size(); i < n; i++)
            {
                if (waiting.get(i).seq == seq && waiting.get(i).tag == tag)
                {
                    go = waiting.remove(i);
                    break;
                }
            }
            if (go != null && !heldBack[from].isEmpty())
            {
                next = heldBack[from].pollFirst();
                awaitingCts[from].add(next);
            }
        }
        if (go == null)
        {
            return; // the communicator failed meanwhile, and with it the send
        }
        flow.send(from, commId, go.seq, go.tag, go.desc, go.payload, go.done);
        if (next != null)
        {
            flow.requestToSend(from, commId, next.seq, next.tag, next.desc, next.payload.remaining());
        }
    }

    /**
     * Whether messages to a peer wait here: once the peer is gone ({@link PeerStates}, which {@link #send} reads under
     * this lock), they never go.
     *
     * @param peer the peer, in the root communicator.
     * @return whether any wait for it.
     */
    synchronized boolean holdsFor(final int peer)
    {
        return !awaitingCts[peer].isEmpty() || !heldBack[peer].isEmpty();
    }

    /**
     * The communicator failed: every message held here fails, and so does every later one that would be.
     *
     * @param cause the communicator's failure.
     */
    void fail(final HcclException cause)
    {
        final ArrayList<PendingSend> unsent = new ArrayList<>();
        synchronized (this)
        {
            if (failure != null)
            {
                return;
            }
            failure = cause;
            for (int g = 0; g < awaitingCts.length; g++)
            {
                unsent.addAll(awaitingCts[g]);
                unsent.addAll(heldBack[g]);
                awaitingCts[g].clear();
                heldBack[g].clear();
            }
        }
        for (final PendingSend p : unsent)
        {
            p.done.fail(cause);
        }
    }

    /** The communicator's failure, which the fault just reported has set; or, should it not have, one of its own. */
    private synchronized HcclException failed(final String problem, final Throwable cause)
    {
        return failure != null ? failure :
            new HcclException(ErrorCode.E_INTERNAL, problem.replace("{peer}", "peer"), cause);
    }

    /** A message sent by rendezvous, waiting for its clear to send. */
    private record PendingSend(long seq, long tag, OpDescriptor desc, ByteBuffer payload, Request done)
    {
    }
}
