package dev.hccl.api.spi;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IncomingMessageTest
{
    private static final OpDescriptor DESC = new OpDescriptor(Operation.ALL_REDUCE, DataType.INT8, ReduceOp.SUM,
        OpDescriptor.NO_ROOT, 4);

    private final RecordingInbound inbound = new RecordingInbound();
    private final List<Throwable> failed = new ArrayList<>();
    private final IncomingMessage message = new IncomingMessage(inbound, 3, failed::add);

    @Test
    void aPayloadIsWrittenChunkByChunkAndCompletedOnce() throws InterruptedException
    {
        assertTrue(message.begin(7L, 11L, 13L, DESC, 4));
        assertEquals(4, message.remaining());
        assertTrue(message.write(ByteBuffer.wrap(new byte[] {1, 2, 3})));
        assertEquals(1, message.remaining());
        assertTrue(message.write(ByteBuffer.wrap(new byte[] {4})));
        assertEquals(0, message.remaining());
        assertEquals(11L, message.seq());
        assertSame(DESC, message.descriptor());
        message.complete();
        final RecordingInbound.Message m = inbound.nextMessage();
        assertEquals(3, m.from());
        assertEquals(7L, m.commId());
        assertEquals(13L, m.tag());
        assertArrayEquals(new byte[] {1, 2, 3, 4}, m.data());
        assertEquals(List.of(3, 1), m.chunks());
        assertTrue(failed.isEmpty() && inbound.errors.isEmpty(), failed + " " + inbound.errors);
    }

    @Test
    void aMessageWithoutPayloadIsCompletedByTheInboundAlone()
    {
        assertFalse(message.begin(7L, 1L, 0L, DESC, 0));
        assertEquals(1, inbound.messages.size());
        assertTrue(failed.isEmpty());
    }

    @Test
    void aSinkThatThrowsGoesToTheReceiversFailureAndDropsTheMessage()
    {
        assertTrue(message.begin(7L, 1L, 0L, DESC, 4));
        inbound.throwOnWrite = true;
        assertFalse(message.write(ByteBuffer.wrap(new byte[] {1, 2})));
        assertEquals(1, failed.size());
        assertEquals("test sink refuses data", failed.get(0).getMessage());
        assertEquals(4, message.remaining(), "what the sink refused is not counted as written");
        assertTrue(inbound.messages.isEmpty());
    }

    @Test
    void anInboundThatThrowsGoesToTheReceiversFailure()
    {
        inbound.onMessageHook = () ->
        {
            throw new IllegalStateException("no mailbox");
        };
        assertFalse(message.begin(7L, 1L, 0L, DESC, 4));
        assertEquals("no mailbox", failed.get(0).getMessage());
    }
}
