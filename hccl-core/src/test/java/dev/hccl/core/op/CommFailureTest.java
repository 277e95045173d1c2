package dev.hccl.core.op;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import dev.hccl.core.mailbox.Dispatcher;
import dev.hccl.core.mailbox.Mailbox;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transport's failure becomes the user's exception in one way, whether the mailbox found it (a lost link, while a
 * receive waited) or a transfer of the operation was failed by its transport: the rank and peer in the
 * communicator's numbering, the operation and its sequence number, the transport's code and exception as cause. A
 * communicator of global ranks {2, 5} tells numberings apart: rank 1 here is global rank 5.
 */
class CommFailureTest
{
    private static final int[] GLOBAL = {2, 5};
    private static final OpDescriptor REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 4);
    private static final long TAG = Tags.of(1, 0, 0);

    private final List<String> aborts = new ArrayList<>();
    private final List<HcclException> told = new ArrayList<>();

    @Test
    void aSendItsTransportFailedNamesThePeerTheOperationAndKeepsTheIoErrorAsCause()
    {
        final Dispatcher dispatcher = new Dispatcher(6);
        final OpRecord op = new OpRecord(OpRecord.Lane.COLLECTIVE, -1, 41, REDUCE, null);
        final CommFailure failure = failure(dispatcher.mailbox(7), op);
        final Request send = new Request(1, true, TAG);
        final IOException pipe = new IOException("Broken pipe");
        send.fail(pipe);

        final HcclException e = failure.transferFailed(op, send);

        assertEquals(ErrorCode.E_TCP_TRANSFER, e.errorCode());
        assertEquals(0, e.rank());
        assertEquals(1, e.peer(), e.getMessage());
        assertEquals(Operation.ALL_REDUCE, e.operation());
        assertEquals(41, e.sequence());
        assertSame(pipe, e.getCause());
        assertTrue(e.detail().startsWith("send to rank 1 tag ") && e.detail().endsWith("failed: " + pipe),
            e.detail());
        assertSame(e, failure.get());
        assertEquals(List.of(e), told);
        assertEquals(List.of("rank 1: " + e.getMessage()), aborts, "the peer is told, by its link");
        assertEquals(null, failure.unreported(), "the operation carries it to the caller");
    }

    @Test
    void aTransportsOwnCodeAndWordsStandAndTheCommunicatorsFailurePassesAsItIs()
    {
        final Dispatcher dispatcher = new Dispatcher(6);
        final OpRecord op = new OpRecord(OpRecord.Lane.COLLECTIVE, -1, 3, REDUCE, null);
        final CommFailure failure = failure(dispatcher.mailbox(7), op);
        final HcclException shm = new HcclException(ErrorCode.E_SHM_SEGMENT, 0, 1, null, HcclException.NO_SEQUENCE,
            "the segment shared with rank 1 was truncated", null);
        final Request recv = new Request(1, false, TAG);
        recv.fail(shm);

        final HcclException e = failure.transferFailed(op, recv);
        assertEquals(ErrorCode.E_SHM_SEGMENT, e.errorCode());
        assertTrue(e.detail().startsWith("recv from rank 1 tag ") &&
            e.detail().endsWith("failed: the segment shared with rank 1 was truncated"), e.detail());
        assertSame(shm, e.getCause());

        final Request later = new Request(1, true, TAG);
        later.fail(e);
        assertSame(e, failure.transferFailed(op, later), "the communicator's own failure is not restated");
        assertEquals(1, told.size(), "the failure is told once");
    }

    @Test
    void aLinkLostWhileAReceiveWaitsReadsAsATransfersFailureDoes()
    {
        final Dispatcher dispatcher = new Dispatcher(6);
        final Mailbox mailbox = dispatcher.mailbox(7);
        final OpRecord op = new OpRecord(OpRecord.Lane.COLLECTIVE, -1, 9, REDUCE, null);
        final CommFailure failure = failure(mailbox, op);
        mailbox.attach(GLOBAL, failure);
        final Request recv = new Request(1, false, TAG);
        mailbox.post(5, 9, TAG, REDUCE, ByteBuffer.allocateDirect(4), 0, 4, null, null, 0, recv);
        final IOException reset = new IOException("Connection reset by peer");

        dispatcher.onLinkFailure(5, reset);

        final HcclException e = failure.get();
        assertEquals(ErrorCode.E_TCP_TRANSFER, e.errorCode());
        assertEquals(1, e.peer(), e.getMessage());
        assertEquals(9, e.sequence());
        assertSame(reset, e.getCause());
        assertTrue(e.detail().contains("rank 1") && e.detail().contains(reset.toString()), e.detail());
        assertTrue(recv.isDone());
        assertSame(e, recv.failure(), "the mailbox fails its receive with the communicator's failure");
        assertFalse(failure.unreported() == null, "no operation carried it yet: close() reports it");
    }

    private CommFailure failure(final Mailbox mailbox, final OpRecord running)
    {
        final Whereabouts whereabouts = new Whereabouts(() -> 0);
        whereabouts.running(running);
        return new CommFailure(0, 7, new RankNumbering(GLOBAL), this::link, mailbox, null, whereabouts, new OpListener()
            {
                @Override
                public void failed(final HcclException f, final boolean relayed)
                {
                    told.add(f);
                }
            });
    }

    private Link link(final int peer)
    {
        return new Link()
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
                throw new UnsupportedOperationException();
            }

            @Override
            public void abort(final long commId, final String reason)
            {
                aborts.add("rank " + peer + ": " + reason);
            }
        };
    }
}
