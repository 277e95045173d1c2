package dev.hccl.core.mailbox;

import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A receive that reduces out of place ({@code dst = left op received}) gives what copying {@code left} first and
 * then reducing gives, whatever the split of the stream into chunks (elements cut across chunks included), whether
 * it is posted before the message comes or after, and never reads or changes bytes outside its region.
 */
class OutOfPlaceReceiveTest
{
    private static final int ELEMENTS = 1001;
    private static final int OFFSET = 24;

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 7, 8, 13, 4096, 1 << 20})
    void theStreamReducedWithTheLeftOperandMatchesCopyThenReduce(final int chunkBytes)
    {
        for (final boolean postedFirst : new boolean[] {true, false})
        {
            for (final DataType type : new DataType[] {DataType.FP64, DataType.INT32, DataType.BF16, DataType.INT8})
            {
                check(type, chunkBytes, postedFirst);
            }
        }
    }

    private static void check(final DataType type, final int chunkBytes, final boolean postedFirst)
    {
        final int bytes = ELEMENTS * type.size();
        final Random random = new Random(chunkBytes * 31L + type.ordinal());
        final ByteBuffer left = randomBuffer(random, OFFSET + bytes + OFFSET);
        final ByteBuffer received = randomBuffer(random, bytes);
        final ByteBuffer dst = randomBuffer(random, OFFSET + bytes + OFFSET);
        final ByteBuffer dstBefore = copyOf(dst);
        final ByteBuffer leftBefore = copyOf(left);

        // The expectation: copy, then reduce in place.
        final ByteBuffer expected = copyOf(left);
        Reducers.of(type, ReduceOp.SUM).reduce(expected, OFFSET, received, 0, ELEMENTS);

        final Mailbox mailbox = new Dispatcher(2).mailbox(7);
        final OpDescriptor desc = new OpDescriptor(Operation.SEND, type, null, OpDescriptor.NO_ROOT, ELEMENTS);
        final long tag = Tags.of(Tags.P2P_PHASE, 0, 0);
        final Request request = new Request(1, false, tag);
        if (postedFirst)
        {
            mailbox.post(1, 0, tag, desc, dst, OFFSET, bytes, Reducers.of(type, ReduceOp.SUM), left, OFFSET, request);
        }
        final MessageSink sink = mailbox.onMessage(1, 0, tag, desc, bytes);
        for (int at = 0; at < bytes; at += chunkBytes)
        {
            final int n = Math.min(chunkBytes, bytes - at);
            final ByteBuffer chunk = received.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            chunk.position(at).limit(at + n);
            sink.write(chunk);
            assertEquals(at + n, chunk.position(), "the sink must consume its chunk");
        }
        sink.complete();
        if (!postedFirst)
        {
            mailbox.post(1, 0, tag, desc, dst, OFFSET, bytes, Reducers.of(type, ReduceOp.SUM), left, OFFSET, request);
        }
        assertTrue(request.isDone());
        assertNull(request.failure());
        final String what = type + ", chunks of " + chunkBytes + ", posted " + (postedFirst ? "first" : "after");
        for (int i = 0; i < OFFSET; i++)
        {
            assertEquals(dstBefore.get(i), dst.get(i), what + ": byte " + i + " before the region changed");
            assertEquals(dstBefore.get(OFFSET + bytes + i), dst.get(OFFSET + bytes + i), what + ": after the region");
        }
        for (int i = OFFSET; i < OFFSET + bytes; i++)
        {
            assertEquals(expected.get(i), dst.get(i), what + ": byte " + i);
        }
        assertEquals(leftBefore, left, what + ": the left operand must not change");
    }

    private static ByteBuffer randomBuffer(final Random random, final int bytes)
    {
        final byte[] b = new byte[bytes];
        random.nextBytes(b);
        // Finite floating-point values: keep exponents away from all ones (NaN/infinity make equality murky).
        for (int i = 1; i < bytes; i += 2)
        {
            b[i] &= 0x3F;
        }
        final ByteBuffer buf = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        buf.put(b).clear();
        return buf;
    }

    private static ByteBuffer copyOf(final ByteBuffer b)
    {
        final ByteBuffer c = ByteBuffer.allocateDirect(b.capacity()).order(ByteOrder.nativeOrder());
        c.put(0, b, 0, b.capacity());
        return c;
    }
}
