package dev.hccl.api.spi;

import java.nio.ByteBuffer;

/**
 * Where the payload of one incoming message goes: a posted receive's destination (copied or reduced into), or a
 * buffer held until the receive is posted. A transport writes the payload in one or more chunks, in order, then
 * calls {@link #complete()}. Used by one thread at a time.
 */
public interface MessageSink
{
    /**
     * Consumes the bytes from {@code chunk}'s position to its limit; may move the position. The chunk is valid only
     * during the call: a sink that needs the bytes later copies them.
     *
     * @param chunk the next bytes of the payload.
     */
    void write(ByteBuffer chunk);

    /**
     * The whole payload has been written.
     */
    void complete();

    /**
     * Where the next bytes of the message may be read to directly, instead of being passed to {@link #write}: a view
     * of the destination in native memory, from the next byte of the message to its last, when this sink would only
     * copy them; null when it must see the bytes (to reduce or to buffer them), which is the default. A transport
     * that takes the view reads into it and then calls {@link #placed(int)} with the bytes read, before anything
     * else happens to this message; meanwhile the sink must not hand the destination back to its owner.
     *
     * @return the view, positioned at its start, or null.
     */
    default ByteBuffer placement()
    {
        return null;
    }

    /**
     * Ends a {@link #placement()}: that many bytes now sit at the start of the view.
     *
     * @param bytes bytes read into the view, 0 when the read brought none.
     * @throws IllegalStateException when no placement was taken.
     */
    default void placed(final int bytes)
    {
        throw new IllegalStateException("placed(" + bytes + ") without placement()");
    }
}
