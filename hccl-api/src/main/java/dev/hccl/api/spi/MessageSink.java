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
}
