package dev.hccl.core.mailbox;

import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;

import java.nio.ByteBuffer;

/**
 * A message that arrived before its receive was posted: held in a buffer of its own, then delivered when the
 * receive comes (or, if the receive comes while the message is still arriving, when its last byte does).
 */
final class Unexpected implements MessageSink
{
    final int from;
    final long seq;
    final long tag;
    final OpDescriptor desc;
    final int length;
    private final Mailbox mailbox;
    private final ByteBuffer data;
    boolean complete;
    PostedRecv attached;

    Unexpected(
        final Mailbox mailbox, final int from, final long seq, final long tag, final OpDescriptor desc, final int length)
    {
        this.mailbox = mailbox;
        this.from = from;
        this.seq = seq;
        this.tag = tag;
        this.desc = desc;
        this.length = length;
        this.data = ByteBuffer.allocate(length);
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
        receiver.complete();
    }
}
