package dev.hccl.core.mailbox;

import dev.hccl.api.HcclException;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A peer's closing record (it issued {@code count} collectives) fails the receives of later collectives from it, and
 * only those: over a link of several connections its data for its own last collectives may arrive after the record.
 */
class PeerClosingTest
{
    private static final OpDescriptor REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 4);
    private static final OpDescriptor RECV =
        new OpDescriptor(Operation.RECV, DataType.FP32, null, OpDescriptor.NO_ROOT, 4);
    private static final long TAG = Tags.of(1, 0, 0);

    @Test
    void aReceiveOfTheClosingPeersOwnLastCollectiveWaitsForItsData()
    {
        final Mailbox mailbox = new Dispatcher(2).mailbox(7);
        final List<String> faults = attach(mailbox);
        final Request last = post(mailbox, 4, REDUCE);
        mailbox.onClosing(1, 4, REDUCE, 5, 99); // collectives #0..#4: #4's data is still on its way
        assertTrue(faults.isEmpty(), faults.toString());
        assertFalse(last.isDone());
        final Request alsoFine = post(mailbox, 3, REDUCE);
        assertFalse(alsoFine.isDone(), "a receive of #3 may still get its data");
        assertTrue(faults.isEmpty(), faults.toString());
    }

    @Test
    void aReceiveOfALaterCollectiveFailsWhenTheRecordArrives()
    {
        final Mailbox mailbox = new Dispatcher(2).mailbox(7);
        final List<String> faults = attach(mailbox);
        post(mailbox, 5, REDUCE);
        mailbox.onClosing(1, 4, REDUCE, 5, 99);
        assertEquals(1, faults.size(), faults.toString());
        assertTrue(faults.get(0).startsWith("E_REMOTE from 1: {peer} closed its communicator after issuing 5 " +
            "collectives, while this rank waits for its data in collective #5"), faults.get(0));
    }

    @Test
    void aReceiveOfALaterCollectivePostedAfterTheRecordFails()
    {
        final Mailbox mailbox = new Dispatcher(2).mailbox(7);
        final List<String> faults = attach(mailbox);
        mailbox.onClosing(1, 4, REDUCE, 5, 99);
        final Request late = post(mailbox, 5, REDUCE);
        assertTrue(late.isDone(), "failed at once");
        assertEquals(1, faults.size(), faults.toString());
        assertTrue(faults.get(0).contains("in collective #5"), faults.get(0));
    }

    @Test
    void pointToPointReceivesAreNumberedApartAndLeftAlone()
    {
        final Mailbox mailbox = new Dispatcher(2).mailbox(7);
        final List<String> faults = attach(mailbox);
        post(mailbox, 9, RECV); // the peer's 10th send to this rank, whatever its collectives
        mailbox.onClosing(1, 4, REDUCE, 5, 99);
        assertTrue(faults.isEmpty(), faults.toString());
    }

    private static Request post(final Mailbox mailbox, final long seq, final OpDescriptor desc)
    {
        final Request r = new Request(1, false, TAG);
        mailbox.post(1, seq, TAG, desc, ByteBuffer.allocateDirect(4), 0, 4, null, null, 0, r);
        return r;
    }

    private static List<String> attach(final Mailbox mailbox)
    {
        final List<String> faults = new ArrayList<>();
        mailbox.attach(new int[]{0, 1}, f ->
        {
            faults.add(f.code() + " from " + f.globalPeer() + ": " + f.message());
            return new HcclException(f.code(), f.message());
        });
        return faults;
    }
}
