package dev.hccl.core.mailbox;

import dev.hccl.api.spi.MessageSink;

import java.nio.ByteBuffer;

/** Drops a payload: for messages of closed or failed communicators, and messages refused. */
final class DiscardSink implements MessageSink
{
    /** The one instance. */
    static final DiscardSink INSTANCE = new DiscardSink();

    private DiscardSink()
    {
    }

    @Override
    public void write(final ByteBuffer chunk)
    {
        chunk.position(chunk.limit());
    }

    @Override
    public void complete()
    {
    }
}
