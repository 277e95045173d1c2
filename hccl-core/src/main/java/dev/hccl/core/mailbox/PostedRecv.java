package dev.hccl.core.mailbox;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A receive posted by an algorithm: the payload is copied, or reduced, straight into the destination as it arrives.
 * An element split between two chunks of the stream is held back in {@link #carry} until its last byte comes.
 */
final class PostedRecv implements MessageSink
{
    private final Mailbox mailbox;
    final int from;
    final long seq;
    final long tag;
    final OpDescriptor mine;
    final Request request;
    private final ByteBuffer dst;
    private final int offset;
    final int length;
    private final Reducer reducer;
    /** The left operand of an out-of-place reduction, copied into dst piece by piece just before each is reduced. */
    private final ByteBuffer left;
    private final int leftOffset;
    private int written;
    private volatile boolean cancelled;
    /** Guarded by the mailbox: its sender asked to send by rendezvous and was cleared to, so the payload has no credit. */
    boolean rendezvous;
    private ByteBuffer carry;

    PostedRecv(
        final Mailbox mailbox,
        final int from,
        final long seq,
        final long tag,
        final OpDescriptor mine,
        final ByteBuffer dst,
        final int offset,
        final int length,
        final Reducer reducer,
        final ByteBuffer left,
        final int leftOffset,
        final Request request)
    {
        this.mailbox = mailbox;
        this.from = from;
        this.seq = seq;
        this.tag = tag;
        this.mine = mine;
        this.dst = dst;
        this.offset = offset;
        this.length = length;
        this.reducer = reducer;
        this.left = reducer == null ? null : left;
        this.leftOffset = leftOffset;
        this.request = request;
    }

    boolean matches(final long seq, final long tag)
    {
        return this.seq == seq && this.tag == tag;
    }

    void cancel()
    {
        cancelled = true;
    }

    @Override
    public void write(final ByteBuffer chunk)
    {
        if (cancelled)
        {
            chunk.position(chunk.limit());
            return;
        }
        int position = chunk.position();
        int available = chunk.limit() - position;
        if (available > length - written)
        {
            throw new IllegalStateException("payload longer than the " + length + " bytes posted");
        }
        if (reducer == null)
        {
            Copies.copy(dst, offset + written, chunk, position, available);
            written += available;
            chunk.position(position + available);
            return;
        }
        final int elementSize = reducer.elementSize();
        if (carry != null && carry.position() > 0)
        {
            final int take = Math.min(elementSize - carry.position(), available);
            carry.put(carry.position(), chunk, position, take);
            carry.position(carry.position() + take);
            position += take;
            available -= take;
            if (carry.position() == elementSize)
            {
                primeLeft(elementSize);
                reducer.reduce(dst, offset + written, carry, 0, 1);
                written += elementSize;
                carry.position(0);
            }
        }
        final int elements = available / elementSize;
        if (elements > 0)
        {
            primeLeft(elements * elementSize);
            reducer.reduce(dst, offset + written, chunk, position, elements);
            written += elements * elementSize;
            position += elements * elementSize;
            available -= elements * elementSize;
        }
        if (available > 0)
        {
            if (carry == null)
            {
                carry = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
            }
            carry.put(0, chunk, position, available);
            carry.position(available);
            position += available;
        }
        chunk.position(position);
    }

    /** Out of place: the next bytes of dst start as the left operand's, while they are about to be hot in cache. */
    private void primeLeft(final int bytes)
    {
        if (left != null)
        {
            Copies.copy(dst, offset + written, left, leftOffset + written, bytes);
        }
    }

    @Override
    public void complete()
    {
        mailbox.finished(this);
        request.complete();
    }
}
