package dev.hccl.api.testing;

import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * An {@link Inbound} that records everything, for the transports' tests: sinks copy the payload into an array and
 * note each chunk's size and whether it was a view of direct memory.
 */
public final class RecordingInbound implements Inbound
{
    /** How long {@link #nextMessage()} and {@link #nextFailure()} wait. */
    public static final long WAIT_SECONDS = 20;

    /**
     * A message as its sink completed it.
     *
     * @param from      the sender.
     * @param commId    the communicator.
     * @param seq       the sequence number.
     * @param tag       the tag.
     * @param desc      the fingerprint.
     * @param data      the payload.
     * @param chunks    the size of each chunk written, in order.
     * @param allDirect whether every chunk was a view of direct memory.
     * @param thread    the thread that announced it.
     */
    public record Message(
        int from, long commId, long seq, long tag, OpDescriptor desc, byte[] data, List<Integer> chunks,
        boolean allDirect, String thread)
    {
        /**
         * How many write calls the payload took.
         *
         * @return the number of chunks.
         */
        public int writes()
        {
            return chunks.size();
        }
    }

    /**
     * A link failure as reported.
     *
     * @param peer  the peer.
     * @param cause why.
     */
    public record Failure(int peer, Throwable cause)
    {
    }

    /** The messages completed. */
    public final BlockingQueue<Message> messages = new LinkedBlockingQueue<>();
    /** The link failures. */
    public final BlockingQueue<Failure> failures = new LinkedBlockingQueue<>();
    /** The peers that closed. */
    public final BlockingQueue<Integer> peerClosed = new LinkedBlockingQueue<>();
    /** The aborts, as {@code peer/commId: reason}. */
    public final BlockingQueue<String> aborts = new LinkedBlockingQueue<>();
    /**
     * Every event in order of arrival: {@code msg FROM SEQ}, {@code closed PEER}, {@code failed PEER},
     * {@code abort PEER}.
     */
    public final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    /** Anything a sink saw that it should not have. */
    public final BlockingQueue<String> errors = new LinkedBlockingQueue<>();
    /** Whether sinks throw on write. */
    public volatile boolean throwOnWrite;
    /** Runs in each onMessage, on the delivering thread. */
    public volatile Runnable onMessageHook = () -> { };

    @Override
    public MessageSink onMessage(
        final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc,
        final int length)
    {
        final String thread = Thread.currentThread().getName();
        onMessageHook.run();
        return new MessageSink()
        {
            private final byte[] data = new byte[length];
            private final List<Integer> chunks = new ArrayList<>();
            private boolean allDirect = true;
            private int pos;
            private boolean completed;

            @Override
            public void write(final ByteBuffer chunk)
            {
                if (throwOnWrite)
                {
                    throw new IllegalStateException("test sink refuses data");
                }
                final int n = chunk.remaining();
                chunks.add(n);
                allDirect &= chunk.isDirect();
                if (0 == n || pos + n > length || completed)
                {
                    errors.add("bad write of " + n + " bytes at " + pos + " of " + length + " from rank " + fromRank);
                    return;
                }
                chunk.get(data, pos, n);
                pos += n;
            }

            @Override
            public void complete()
            {
                if (completed || pos != length)
                {
                    errors.add("complete at " + pos + " of " + length + " (completed before: " + completed + ")");
                }
                completed = true;
                events.add("msg " + fromRank + " " + seq);
                messages.add(new Message(fromRank, commId, seq, tag, desc, data, chunks, allDirect, thread));
            }
        };
    }

    @Override
    public void onLinkFailure(final int peer, final Throwable cause)
    {
        events.add("failed " + peer);
        failures.add(new Failure(peer, cause));
    }

    @Override
    public void onPeerClosed(final int peer)
    {
        events.add("closed " + peer);
        peerClosed.add(peer);
    }

    @Override
    public void onAbort(final int peer, final long commId, final String reason)
    {
        events.add("abort " + peer);
        aborts.add(peer + "/" + commId + ": " + reason);
    }

    /**
     * The next message completed, waiting up to {@link #WAIT_SECONDS}.
     *
     * @return the message.
     * @throws InterruptedException when interrupted.
     */
    public Message nextMessage() throws InterruptedException
    {
        final Message m = messages.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(m, "no message arrived within " + WAIT_SECONDS + " s");
        return m;
    }

    /**
     * The next link failure, waiting up to {@link #WAIT_SECONDS}.
     *
     * @return the failure.
     * @throws InterruptedException when interrupted.
     */
    public Failure nextFailure() throws InterruptedException
    {
        final Failure f = failures.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(f, "no link failure reported within " + WAIT_SECONDS + " s");
        return f;
    }
}
