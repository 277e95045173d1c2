package dev.hccl.core.mailbox;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A fault reaches the communicator as values: the transport's exception stays its cause, with its code and peer, and
 * a peer's own failure (its ABORT) is marked as relayed; whether a fault came before or after the communicator
 * attached, and in every mailbox of the process, since which peers are gone is kept once ({@link PeerStates}).
 */
class FaultStructureTest
{
    private static final OpDescriptor REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 4);
    private static final long TAG = Tags.of(1, 0, 0);

    private static HcclException reset()
    {
        return new HcclException(ErrorCode.E_TCP_TRANSFER, 0, 1, null, HcclException.NO_SEQUENCE,
            "connection to rank 1 failed", new IOException("Connection reset by peer"));
    }

    @Test
    void aLostLinkKeepsTheTransportsExceptionAsTheCause()
    {
        final Dispatcher dispatcher = new Dispatcher(2);
        final Mailbox mailbox = dispatcher.mailbox(7);
        final List<Fault> faults = attach(mailbox, 2);
        post(mailbox);
        final HcclException cause = reset();
        dispatcher.onLinkFailure(1, cause);

        assertEquals(1, faults.size(), faults.toString());
        final Fault f = faults.get(0);
        assertEquals(ErrorCode.E_TCP_TRANSFER, f.code());
        assertEquals(1, f.globalPeer());
        assertSame(cause, f.cause());
        assertFalse(f.relayed());
        assertArrayEquals(new int[]{1}, dispatcher.lostPeers());
    }

    @Test
    void aPeersAbortIsRelayedAndALinkLostBeforeTheCommunicatorAttachedIsReplayedWithItsCause()
    {
        final Dispatcher dispatcher = new Dispatcher(3);
        final Mailbox first = dispatcher.mailbox(7);
        final List<Fault> faults = attach(first, 3);
        dispatcher.onAbort(1, 7, "rank 1's own failure");
        assertEquals(1, faults.size(), faults.toString());
        assertTrue(faults.get(0).relayed() && faults.get(0).message().contains("rank 1's own failure"),
            faults.toString());

        final HcclException cause = reset();
        dispatcher.onLinkFailure(2, cause);
        final Mailbox later = dispatcher.mailbox(8); // made after the loss: it knows of it all the same
        final List<Fault> laterFaults = attach(later, 3);
        assertEquals(1, laterFaults.size(), laterFaults.toString());
        assertSame(cause, laterFaults.get(0).cause());
        assertEquals(2, laterFaults.get(0).globalPeer());

        // A receive from the gone peer fails at once, with the same cause.
        final Request r = post(later, 2);
        assertTrue(r.isDone());
        assertSame(cause, laterFaults.get(laterFaults.size() - 1).cause());
    }

    @Test
    void aMembersLossIsReportedOnceThoughTheCommunicatorAttachedWhileItWasToldOfIt()
    {
        final Dispatcher dispatcher = new Dispatcher(2);
        final Mailbox mailbox = dispatcher.mailbox(7);
        post(mailbox);
        dispatcher.onLinkFailure(1, reset()); // before attach: kept for attach() to report
        final List<Fault> faults = attach(mailbox, 2);
        mailbox.peerGone(1); // the dispatcher's fan-out reaching this mailbox after attach() replayed the loss
        assertEquals(1, faults.size(), faults.toString());
    }

    @Test
    void aPeerThatClosedInGoodOrderAndThenDropsStaysClosed()
    {
        final Dispatcher dispatcher = new Dispatcher(2);
        final Mailbox mailbox = dispatcher.mailbox(7);
        final List<Fault> faults = attach(mailbox, 2);
        dispatcher.onPeerClosed(1);
        dispatcher.onLinkFailure(1, reset());
        assertTrue(faults.isEmpty(), "nothing waited for the peer: " + faults);
        assertArrayEquals(new int[]{1}, dispatcher.lostPeers(), "its link was lost all the same");
    }

    @Test
    void theListenerAnswersBeforeAnyReceiveWakesAndTheMailboxThenFailsThemWithTheAnswer()
    {
        final Dispatcher dispatcher = new Dispatcher(2);
        final Mailbox mailbox = dispatcher.mailbox(7);
        final HcclException answer = new HcclException(ErrorCode.E_TCP_TRANSFER, "the communicator's failure");
        final Request[] waiting = new Request[1];
        final List<String> seenInCall = new ArrayList<>();
        mailbox.attach(new int[]{0, 1}, f ->
        {
            // The communicator tells its peers here, before anything of this rank wakes.
            seenInCall.add(waiting[0].isDone() ? "the receive had already failed" : "pending");
            return answer;
        });
        waiting[0] = post(mailbox);
        dispatcher.onLinkFailure(1, reset());
        assertEquals(List.of("pending"), seenInCall);
        assertTrue(waiting[0].isDone());
        assertSame(answer, waiting[0].failure(), "the receive fails with the listener's answer");
        assertSame(answer, post(mailbox, 1).failure(), "and so does a later one");
    }

    private static Request post(final Mailbox mailbox)
    {
        return post(mailbox, 1);
    }

    private static Request post(final Mailbox mailbox, final int from)
    {
        final Request r = new Request(from, false, TAG);
        mailbox.post(from, 0, TAG, REDUCE, ByteBuffer.allocateDirect(4), 0, 4, null, null, 0, r);
        return r;
    }

    private static List<Fault> attach(final Mailbox mailbox, final int ranks)
    {
        final List<Fault> faults = new ArrayList<>();
        mailbox.attach(java.util.stream.IntStream.range(0, ranks).toArray(), f ->
        {
            faults.add(f);
            return new HcclException(f.code(), f.message());
        });
        return faults;
    }
}
