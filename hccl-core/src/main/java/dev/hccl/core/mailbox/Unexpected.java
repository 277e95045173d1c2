package dev.hccl.core.mailbox;

import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;

import java.nio.ByteBuffer;

/**
 * A message that arrived before its receive was posted: held in a buffer of its own, then delivered when the
 * receive comes (or, if the receive comes while the message is still arriving, when its last byte does). Or, for a
 * message sent by rendezvous, only its request to send: no buffer, the payload comes once the receive is posted.
 */
final class Unexpected implements MessageSink
{
    final int from;
    final long seq;
    final long tag;
    final OpDescriptor desc;
    final int length;
    /** A request to send, not the message: nothing is buffered. */
    final boolean rendezvous;
    private final Mailbox mailbox;
    private final ByteBuffer data;
    boolean complete;
    PostedRecv attached;

    Unexpected(
        final Mailbox mailbox, final int from, final long seq, final long tag, final OpDescriptor desc, final int length,
        final boolean rendezvous)
    {
        this.mailbox = mailbox;
        this.from = from;
        this.seq = seq;
        this.tag = tag;
        this.desc = desc;
        this.length = length;
        this.rendezvous = rendezvous;
        // The sender took credit for these bytes (FlowControl), so the length is bounded by the peer's budget.
        this.data = rendezvous ? null : ByteBuffer.allocate(length);
    }

    boolean matches(final long seq, final long tag)
    {
        return this.seq == seq && this.tag == tag;
    }

    @Override
    public void write(final ByteBuffer chunk)
    {
        data.put(chunk);
    }

    @Override
    public void complete()
    {
        final PostedRecv receiver = mailbox.unexpectedComplete(this);
        if (receiver != null)
        {
            deliverTo(receiver);
        }
    }

    void deliverTo(final PostedRecv receiver)
    {
        receiver.write(data.duplicate().flip());
        mailbox.released(this);
        receiver.complete();
    }
}
