package dev.hccl.core.mailbox;

import dev.hccl.api.DataType;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Tags;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A message of a collective that no receive took is a disagreement between the ranks (how much to send), whenever it
 * comes: before the operation ends (its end says so), or after it ended and before the next began (the next begins
 * by saying so); never kept silently.
 */
class LeftoverMessageTest
{
    private static final OpDescriptor GATHER =
        new OpDescriptor(Operation.ALL_GATHER_V, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 768);
    private static final OpDescriptor BARRIER =
        new OpDescriptor(Operation.BARRIER, null, null, OpDescriptor.NO_ROOT, 0);

    @Test
    void aLeftoverThatComesBeforeTheEndIsNamedByTheEnd()
    {
        final Mailbox mailbox = new Dispatcher(2).mailbox(7);
        final List<String> faults = attach(mailbox);
        mailbox.beginOp(1, GATHER);
        deliver(mailbox, 1, Tags.of(1, 0, 1));
        final String left = mailbox.endOp(1);
        assertTrue(left != null && left.contains("that no receive took"), left);
        assertTrue(faults.isEmpty(), faults.toString());
    }

    @Test
    void aLeftoverThatComesBetweenTwoOperationsFailsTheNextAsAMismatch()
    {
        final Mailbox mailbox = new Dispatcher(2).mailbox(7);
        final List<String> faults = attach(mailbox);
        mailbox.beginOp(1, GATHER);
        assertNull(mailbox.endOp(1));
        deliver(mailbox, 1, Tags.of(1, 0, 1)); // the peer's second segment, after this rank finished #1
        assertTrue(faults.isEmpty(), "nothing can tell yet: #1 is still the latest operation");
        mailbox.beginOp(2, BARRIER);
        assertEquals(1, faults.size(), faults.toString());
        assertTrue(faults.get(0).startsWith("E_MISMATCH from 1: {peer} sent 16 bytes for operation #1") &&
            faults.get(0).contains("that no receive took"), faults.get(0));
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

    private static void deliver(final Mailbox mailbox, final long seq, final long tag)
    {
        final MessageSink sink = mailbox.onMessage(1, seq, tag, GATHER, 16);
        sink.write(ByteBuffer.allocate(16));
        sink.complete();
    }
}
