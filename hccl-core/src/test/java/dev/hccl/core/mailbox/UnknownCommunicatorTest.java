package dev.hccl.core.mailbox;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Frames for communicator ids this process never made were kept forever (issue 13); they are refused now, and a peer
 * that sends beyond its eager credit is a protocol error rather than memory held.
 */
class UnknownCommunicatorTest
{
    private static final OpDescriptor DESC = new OpDescriptor(Operation.SEND, DataType.UINT8, null, -1, 100);
    private static final long TAG = Tags.of(Tags.P2P_PHASE, 0, 0);

    private final List<String> aborts = new ArrayList<>();

    @Test
    void aMessageForACommunicatorNeverMadeIsDroppedAndItsSenderToldOnce()
    {
        final Dispatcher dispatcher = dispatcher(1 << 20);
        dispatcher.mailbox(7); // the one communicator this process has
        assertSame(Mailbox.DISCARD, dispatcher.onMessage(1, 999, 0, TAG, DESC, 100));
        assertSame(Mailbox.DISCARD, dispatcher.onMessage(1, 999, 1, TAG, DESC, 100));
        assertEquals(1, aborts.size(), aborts.toString());
        assertTrue(aborts.get(0).startsWith("to 1 comm 999: has no communicator 3e7"), aborts.toString());
        assertEquals(2 * FlowControl.cost(100), dispatcher.flow().owedTo(1), "the dropped messages' credit is owed back");
    }

    @Test
    void duringASplitAPeersEarlyMessageIsKeptUntilTheSplitMakesItsCommunicator()
    {
        final Dispatcher dispatcher = dispatcher(1 << 20);
        dispatcher.splitBegins();
        final MessageSink early = dispatcher.onMessage(1, 42, 0, TAG, DESC, 0);
        assertNotSame(Mailbox.DISCARD, early, "a peer may finish the split first and send at once");
        final Mailbox made = dispatcher.mailbox(42);
        dispatcher.splitEnds();
        assertSame(made, dispatcher.mailbox(42), "claimed by the split: kept");

        dispatcher.splitBegins();
        assertNotSame(Mailbox.DISCARD, dispatcher.onMessage(1, 43, 0, TAG, DESC, 0));
        dispatcher.splitEnds(); // no communicator 43 was made here
        assertSame(Mailbox.DISCARD, dispatcher.onMessage(1, 43, 1, TAG, DESC, 0), "unclaimed: dropped");
        assertTrue(aborts.isEmpty(), "a communicator dropped after a split is not refused again: " + aborts);
    }

    @Test
    void onceACommunicatorHereHasFailedAPeersEarlyMessageIsKeptForTheShrinkThatMayFollow()
    {
        // A survivor's abort arrives before its first message for the shrunk communicator, while this rank may not
        // have noticed the lost rank itself yet.
        final Dispatcher dispatcher = dispatcher(1 << 20);
        dispatcher.mailbox(7).fail(new HcclException(ErrorCode.E_REMOTE, "rank 1 failed: rank 2 died"));
        assertNotSame(Mailbox.DISCARD, dispatcher.onMessage(1, 44, 0, TAG, DESC, 0));
        assertTrue(aborts.isEmpty(), aborts.toString());
    }

    @Test
    void beyondTheEarlyLimitEvenASplitRefuses()
    {
        final Dispatcher dispatcher = dispatcher(1 << 20);
        dispatcher.splitBegins();
        for (int id = 0; id < Dispatcher.MAX_EARLY_COMMUNICATORS; id++)
        {
            assertNotSame(Mailbox.DISCARD, dispatcher.onMessage(1, 1000 + id, 0, TAG, DESC, 0));
        }
        assertSame(Mailbox.DISCARD, dispatcher.onMessage(1, 5000, 0, TAG, DESC, 0));
        assertEquals(1, aborts.size());
    }

    @Test
    void aPeerThatSendsBeyondItsCreditFailsTheCommunicatorInsteadOfBeingBuffered()
    {
        final Dispatcher dispatcher = dispatcher(1000);
        final Mailbox mailbox = dispatcher.mailbox(7);
        final List<String> faults = new ArrayList<>();
        final long[] heldWhenReported = {-1};
        mailbox.attach(new int[]{0, 1}, f ->
        {
            faults.add(f.code() + " " + f.globalPeer() + " " + f.message());
            heldWhenReported[0] = mailbox.bufferedBytes();
            return new HcclException(f.code(), f.message());
        });
        assertNotSame(Mailbox.DISCARD, dispatcher.onMessage(1, 7, 0, TAG, DESC, 900), "within the budget: kept");
        assertSame(Mailbox.DISCARD, dispatcher.onMessage(1, 7, 1, TAG, DESC, 900));
        assertEquals(1, faults.size(), faults.toString());
        assertTrue(faults.get(0).startsWith(ErrorCode.E_INTERNAL + " 1 {peer} sent a message of 900 bytes beyond " +
            "the eager credit"), faults.toString());
        assertEquals(900, heldWhenReported[0], "the message beyond the credit was never buffered");
        assertEquals(0, mailbox.bufferedBytes(), "the failed mailbox let go of what it held");
    }

    private Dispatcher dispatcher(final int budget)
    {
        final Dispatcher dispatcher = new Dispatcher(2, budget);
        dispatcher.flow().useLinks(peer -> new Link()
        {
            @Override
            public int peer()
            {
                return peer;
            }

            @Override
            public void send(
                final long commId, final long seq, final long tag, final OpDescriptor desc, final ByteBuffer payload,
                final Request done)
            {
                done.complete();
            }

            @Override
            public void abort(final long commId, final String reason)
            {
                aborts.add("to " + peer + " comm " + commId + ": " + reason);
            }
        });
        return dispatcher;
    }
}
