package dev.hccl.api.spi;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * The message a transport's receiver is in the middle of, from its header to its last payload byte: it begins the
 * message with the {@link Inbound}, hands the payload to the {@link MessageSink} chunk by chunk and completes it. Every
 * call into the communicator is guarded: one that throws goes to the receiver's {@code failed} (which fails its link)
 * instead of escaping into the transport's I/O, and the message is dropped. How the header and the chunks are read
 * off the wire or the ring is the receiver's own.
 * <p>
 * One per receiver, used on the receiver's thread only.
 */
public final class IncomingMessage
{
    private final Inbound inbound;
    private final int peer;
    private final Consumer<Throwable> failed;

    private MessageSink sink;
    private int remaining;
    private long seq;
    private OpDescriptor descriptor;

    /**
     * A receiver's message slot.
     *
     * @param inbound where messages go.
     * @param peer    the rank the messages come from.
     * @param failed  what the receiver does when the inbound or a sink throws: fail its link.
     */
    public IncomingMessage(final Inbound inbound, final int peer, final Consumer<Throwable> failed)
    {
        this.inbound = inbound;
        this.peer = peer;
        this.failed = failed;
    }

    /**
     * Begins a message whose header the receiver has read.
     *
     * @param commId the communicator.
     * @param seq    the operation's sequence number.
     * @param tag    the tag.
     * @param desc   the operation's fingerprint.
     * @param length the payload's bytes.
     * @return true when a payload follows, to be {@link #write written} and {@link #complete completed}; false when
     * there is none (the inbound has completed the message) or the inbound threw ({@code failed} was told).
     */
    public boolean begin(final long commId, final long seq, final long tag, final OpDescriptor desc, final int length)
    {
        final MessageSink s;
        try
        {
            s = inbound.begin(peer, commId, seq, tag, desc, length);
        }
        catch (final Throwable t)
        {
            failed.accept(t);
            return false;
        }
        if (null == s)
        {
            return false;
        }
        sink = s;
        remaining = length;
        this.seq = seq;
        this.descriptor = desc;
        return true;
    }

    /**
     * Hands a chunk of the payload to the sink, which consumes it before this returns.
     *
     * @param chunk the bytes, little-endian, at most {@link #remaining()} of them.
     * @return true when the sink took them; false when it threw ({@code failed} was told, the message is dropped).
     */
    public boolean write(final ByteBuffer chunk)
    {
        final int length = chunk.remaining();
        try
        {
            sink.write(chunk);
        }
        catch (final Throwable t)
        {
            sink = null;
            failed.accept(t);
            return false;
        }
        remaining -= length;
        return true;
    }

    /**
     * Completes the message once all of its payload is written (and, where the transport checks one, its checksum
     * matched). A sink that throws goes to {@code failed}.
     */
    public void complete()
    {
        final MessageSink s = sink;
        sink = null;
        try
        {
            s.complete();
        }
        catch (final Throwable t)
        {
            failed.accept(t);
        }
    }

    /**
     * Drops the message in progress, if any: the link failed or the payload was refused.
     */
    public void drop()
    {
        sink = null;
    }

    /**
     * The payload bytes still to come.
     *
     * @return 0 once all are written.
     */
    public int remaining()
    {
        return remaining;
    }

    /**
     * The message's sequence number, for an error about it.
     *
     * @return the number its header carried.
     */
    public long seq()
    {
        return seq;
    }

    /**
     * The message's operation, for an error about it.
     *
     * @return the fingerprint its header carried.
     */
    public OpDescriptor descriptor()
    {
        return descriptor;
    }
}
