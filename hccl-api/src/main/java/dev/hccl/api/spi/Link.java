package dev.hccl.api.spi;

import java.nio.ByteBuffer;

/**
 * The connection to one peer, shared by every communicator of the process that includes both ranks.
 */
public interface Link
{
    /**
     * The peer's rank in the root communicator.
     *
     * @return the rank.
     */
    int peer();

    /**
     * Sends one message. The payload is read from its position to its limit and is not modified; {@code done}
     * completes when it may be reused, or fails when the link fails.
     *
     * @param commId  the communicator.
     * @param seq     the operation's sequence number.
     * @param tag     the tag within the operation.
     * @param desc    this rank's operation (the fingerprint the receiver checks).
     * @param payload the bytes.
     * @param done    completion.
     */
    void send(long commId, long seq, long tag, OpDescriptor desc, ByteBuffer payload, Request done);

    /**
     * Tells the peer, best effort, that this rank's communicator {@code commId} failed. The link stays usable for
     * the other communicators that share it.
     *
     * @param commId the communicator that failed.
     * @param reason the failure, in words.
     */
    void abort(long commId, String reason);

    /**
     * How long the peer has been silent on this link: since a message or a heartbeat last came from it, for
     * {@code hccl-status}. A transport whose peers cannot fall silent (threads of this process) answers 0.
     *
     * @return milliseconds, or -1 when the transport does not know.
     */
    default long silentMillis()
    {
        return -1;
    }
}
