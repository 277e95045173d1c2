package dev.hccl.transport.shm;

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
 * An {@link Inbound} that records everything: sinks copy the payload into an array and note each chunk's size and
 * whether it was a view of direct (shared) memory.
 */
final class RecordingInbound implements Inbound
{
    static final long WAIT_SECONDS = 20;

    record Message(
        int from, long commId, long seq, long tag, OpDescriptor desc, byte[] data, List<Integer> chunks,
        boolean allDirect, String thread)
    {
    }

    record Failure(int peer, Throwable cause)
    {
    }

    final BlockingQueue<Message> messages = new LinkedBlockingQueue<>();
    final BlockingQueue<Failure> failures = new LinkedBlockingQueue<>();
    final BlockingQueue<Integer> peerClosed = new LinkedBlockingQueue<>();
    final BlockingQueue<String> aborts = new LinkedBlockingQueue<>();
    /** Every event in order of arrival: "msg <from> <seq>", "closed <peer>", "failed <peer>", "abort <peer>". */
    final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    /** Anything a sink saw that it should not have. */
    final BlockingQueue<String> errors = new LinkedBlockingQueue<>();
    volatile boolean throwOnWrite;
    /** Runs in each onMessage, on the delivering thread. */
    volatile Runnable onMessageHook = () -> { };

    @Override
    public MessageSink onMessage(
        final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc, final int length)
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

    Message nextMessage() throws InterruptedException
    {
        final Message m = messages.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(m, "no message arrived within " + WAIT_SECONDS + " s");
        return m;
    }

    Failure nextFailure() throws InterruptedException
    {
        final Failure f = failures.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(f, "no link failure reported within " + WAIT_SECONDS + " s");
        return f;
    }
}
