package dev.hccl.core.mailbox;

import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The receive path's chunk-and-carry on its own, without a transport: a posted receive copies, or reduces in place,
 * the stream into its region whatever the cut of the stream into two chunks (an element split across them is carried
 * over), consumes every chunk whole, leaves the bytes around its region alone, refuses a payload longer than posted,
 * drops what comes after it is cancelled, and completes its request. (Out-of-place reduction:
 * {@link OutOfPlaceReceiveTest}.)
 */
class PostedRecvTest
{
    private static final int OFFSET = 16;
    private static final int SLACK = 16;
    private static final long TAG = Tags.of(1, 0, 0);

    @Test
    void aCopyIsWholeAtEveryCutOfTheStream()
    {
        final byte[] payload = random(37, 1);
        for (int cut = 0; cut <= payload.length; cut++)
        {
            final ByteBuffer dst = filled(OFFSET + payload.length + SLACK, (byte)0x5A);
            final Request request = new Request(1, false, TAG);
            final PostedRecv recv = posted(dst, payload.length, null, request);
            write(recv, payload, cut);
            recv.complete();
            for (int i = 0; i < dst.capacity(); i++)
            {
                final byte expected = i >= OFFSET && i < OFFSET + payload.length ? payload[i - OFFSET] : 0x5A;
                assertEquals(expected, dst.get(i), "cut " + cut + ", byte " + i);
            }
            assertTrue(request.isDone());
            assertNull(request.failure());
        }
    }

    @Test
    void anInPlaceReductionCarriesElementsCutAcrossChunks()
    {
        for (final DataType type : new DataType[] {DataType.FP64, DataType.FP32, DataType.BF16, DataType.INT8})
        {
            final int elements = 9;
            final int bytes = elements * type.size();
            final Reducer sum = Reducers.of(type, ReduceOp.SUM);
            final ByteBuffer left = values(type, elements, 3);
            final ByteBuffer right = values(type, elements, 4);
            // What reducing the whole stream at once gives.
            final ByteBuffer expected = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
            expected.put(0, left, 0, bytes);
            sum.reduce(expected, 0, right, 0, elements);
            final byte[] payload = new byte[bytes];
            right.get(0, payload);
            for (int cut = 0; cut <= bytes; cut++)
            {
                final ByteBuffer dst = filled(OFFSET + bytes + SLACK, (byte)0x33);
                dst.put(OFFSET, left, 0, bytes);
                final PostedRecv recv = posted(dst, bytes, sum, new Request(1, false, TAG));
                write(recv, payload, cut);
                for (int i = 0; i < dst.capacity(); i++)
                {
                    final byte want = i >= OFFSET && i < OFFSET + bytes ? expected.get(i - OFFSET) : 0x33;
                    assertEquals(want, dst.get(i), type + ", cut " + cut + ", byte " + i);
                }
            }
        }
    }

    @Test
    void aPayloadLongerThanPostedIsRefused()
    {
        final PostedRecv recv = posted(filled(64, (byte)0), 8, null, new Request(1, false, TAG));
        recv.write(chunk(new byte[6]));
        final IllegalStateException ex =
            assertThrows(IllegalStateException.class, () -> recv.write(chunk(new byte[3])));
        assertTrue(ex.getMessage().contains("longer than the 8 bytes posted"), ex.getMessage());
    }

    @Test
    void whatComesAfterCancelIsDroppedAndConsumed()
    {
        final ByteBuffer dst = filled(OFFSET + 8 + SLACK, (byte)7);
        final PostedRecv recv = posted(dst, 8, null, new Request(1, false, TAG));
        recv.cancel();
        final ByteBuffer c = chunk(random(8, 2));
        recv.write(c);
        assertEquals(c.limit(), c.position(), "a cancelled receive still consumes the chunk");
        for (int i = 0; i < dst.capacity(); i++)
        {
            assertEquals(7, dst.get(i), "byte " + i + " changed after cancel");
        }
    }

    /** Writes the payload as two chunks cut at {@code cut}, checking that each is consumed whole. */
    private static void write(final PostedRecv recv, final byte[] payload, final int cut)
    {
        final ByteBuffer whole = chunk(payload);
        for (final int[] piece : new int[][] {{0, cut}, {cut, payload.length}})
        {
            final ByteBuffer c = whole.duplicate().order(ByteOrder.nativeOrder());
            c.limit(piece[1]).position(piece[0]);
            recv.write(c);
            assertEquals(c.limit(), c.position(), "chunk [" + piece[0] + ", " + piece[1] + ") not consumed");
        }
    }

    private static PostedRecv posted(final ByteBuffer dst, final int length, final Reducer reducer, final Request r)
    {
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_REDUCE, DataType.INT8, ReduceOp.SUM,
            OpDescriptor.NO_ROOT, length);
        return new PostedRecv(new Mailbox(1L, 2), 1, 0, TAG, desc, dst, OFFSET, length, reducer, null, 0, r);
    }

    private static ByteBuffer chunk(final byte[] bytes)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(bytes.length).order(ByteOrder.nativeOrder());
        b.put(0, bytes);
        return b;
    }

    private static ByteBuffer filled(final int bytes, final byte value)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        for (int i = 0; i < bytes; i++)
        {
            b.put(i, value);
        }
        return b;
    }

    /** Small values of the type, exact in it, so that sums are exact too. */
    private static ByteBuffer values(final DataType type, final int elements, final int seed)
    {
        final Random random = new Random(seed);
        final ByteBuffer b = ByteBuffer.allocateDirect(elements * type.size()).order(ByteOrder.nativeOrder());
        for (int i = 0; i < elements; i++)
        {
            final int v = random.nextInt(16) - 8;
            switch (type)
            {
                case FP64 -> b.putDouble(i * 8, v);
                case FP32 -> b.putFloat(i * 4, v);
                case BF16 -> b.putShort(i * 2, (short)(Float.floatToIntBits(v) >>> 16));
                default -> b.put(i, (byte)v);
            }
        }
        return b;
    }

    private static byte[] random(final int bytes, final long seed)
    {
        final byte[] b = new byte[bytes];
        new Random(seed).nextBytes(b);
        return b;
    }
}
