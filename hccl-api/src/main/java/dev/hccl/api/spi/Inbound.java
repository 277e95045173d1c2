package dev.hccl.api.spi;

/**
 * What a transport delivers to: implemented by the communicator layer, called from transport threads.
 * <p>
 * Threading contract: the callbacks about one message come from one thread at a time, in order: {@link #onMessage},
 * then the sink's {@link MessageSink#write} calls and {@link MessageSink#complete}. A transport with one channel per
 * pair delivers a peer's messages one after another in the order sent; one with several (TCP with
 * {@code HCCL_SOCKET_NSOCKS} or {@code HCCL_SOCKET_NTHREADS} above 1) may deliver different messages of one peer
 * side by side, on several threads and in any order, so receivers match by sequence number and tag, never by arrival
 * order. {@link #onPeerClosed} comes after every message the peer sent. Callbacks about different peers may run
 * concurrently. An in-process transport calls them on the sender's thread.
 */
public interface Inbound
{
    /**
     * A message has begun to arrive.
     *
     * @param fromRank the sender's rank in the root communicator.
     * @param commId   the communicator it belongs to.
     * @param seq      the operation's sequence number.
     * @param tag      the tag within the operation.
     * @param desc     the sender's operation.
     * @param length   payload bytes that follow.
     * @return where to put the payload; never null.
     */
    MessageSink onMessage(int fromRank, long commId, long seq, long tag, OpDescriptor desc, int length);

    /**
     * Starts a message as every transport must: {@link #onMessage}, a null sink refused, an empty payload completed at
     * once.
     *
     * @param fromRank the sender's rank in the root communicator.
     * @param commId   the communicator it belongs to.
     * @param seq      the operation's sequence number.
     * @param tag      the tag within the operation.
     * @param desc     the sender's operation.
     * @param length   payload bytes that follow.
     * @return the sink to write the payload to, or null when there is no payload (the message is complete).
     * @throws NullPointerException when {@link #onMessage} returns null.
     */
    default MessageSink begin(
        final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc,
        final int length)
    {
        final MessageSink sink = onMessage(fromRank, commId, seq, tag, desc, length);
        if (null == sink)
        {
            throw new NullPointerException("Inbound.onMessage returned null");
        }
        if (0 == length)
        {
            sink.complete();
            return null;
        }
        return sink;
    }

    /**
     * The connection to a peer failed: closed, reset, or a protocol error.
     *
     * @param peer  the peer's rank in the root communicator.
     * @param cause what happened.
     */
    void onLinkFailure(int peer, Throwable cause);

    /**
     * A peer closed its side in good order (it said goodbye before closing): not a failure, but nothing more will
     * come from it.
     *
     * @param peer the peer's rank in the root communicator.
     */
    void onPeerClosed(int peer);

    /**
     * A peer's communicator failed and it says why.
     *
     * @param peer   the peer's rank in the root communicator.
     * @param commId the communicator that failed there.
     * @param reason its failure, in words.
     */
    void onAbort(int peer, long commId, String reason);
}
