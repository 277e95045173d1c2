package dev.hccl.transport.netty;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.DescriptorCodec;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * Test support for the fuzzers: an {@link Inbound} that writes down what a receiver reports for one case, in the
 * words of {@link FrameStreams#expect}, and everything that breaks the receiver's contract: a length outside
 * {@code [0, maxFrameBytes]}, a sink given more bytes than its message declared or completed early, any report after
 * the link failed or the peer closed. Payloads are checked by CRC, so nothing here is sized by a length from the
 * wire. A transport outlives the cases, so {@link #reset} starts each one. Callbacks come from the test's thread
 * only (the channel is an {@code EmbeddedChannel}).
 */
final class FuzzInbound implements Inbound
{
    /** How {@link #onPeerClosed} is written. */
    static final String PEER_CLOSED = "peer closed";

    /** Events in order: strings, or deliveries whose state is written at the end. */
    private final List<Object> events = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private int maxFrameBytes;
    private int peer = FrameStreams.PEER;
    private FrameStreams.SinkFault fault = FrameStreams.SinkFault.NONE;
    private int messages;
    private boolean ended;

    /**
     * Starts a case.
     *
     * @param maxFrameBytes the receiver's bound.
     * @param sinkFault     where a sink throws.
     */
    void reset(final int maxFrameBytes, final FrameStreams.SinkFault sinkFault)
    {
        reset(maxFrameBytes, sinkFault, FrameStreams.PEER);
    }

    /**
     * Starts a case with a peer of another rank.
     *
     * @param maxFrameBytes the receiver's bound.
     * @param sinkFault     where a sink throws.
     * @param peerRank      the only rank reports may be about.
     */
    void reset(final int maxFrameBytes, final FrameStreams.SinkFault sinkFault, final int peerRank)
    {
        events.clear();
        violations.clear();
        this.maxFrameBytes = maxFrameBytes;
        this.peer = peerRank;
        this.fault = sinkFault;
        messages = 0;
        ended = false;
    }

    /**
     * @return the case's events, as {@link FrameStreams#expect} writes them.
     */
    List<String> events()
    {
        final List<String> out = new ArrayList<>(events.size());
        for (final Object e : events)
        {
            out.add(e.toString());
        }
        return out;
    }

    /**
     * @return what broke the contract in this case; empty when nothing did.
     */
    List<String> violations()
    {
        return violations;
    }

    @Override
    public MessageSink onMessage(
        final int fromRank, final long commId, final long seq, final long tag, final OpDescriptor desc,
        final int length)
    {
        checkOpen("onMessage", fromRank);
        if (length < 0 || length > maxFrameBytes)
        {
            violations.add("onMessage with length " + length + " outside [0, " + maxFrameBytes + "]");
        }
        final int index = messages++;
        if (fault.at(FrameStreams.FaultPhase.ON_MESSAGE, index))
        {
            throw new IllegalStateException(FrameStreams.SINK_FAULT_MESSAGE);
        }
        final Delivery delivery = new Delivery(describeMessage(commId, seq, tag, DescriptorCodec.code(desc.operation()),
            DescriptorCodec.code(desc.dataType()), DescriptorCodec.code(desc.reduceOp()), desc.root(), desc.count(),
            length), length, index);
        events.add(delivery);
        return delivery;
    }

    @Override
    public void onLinkFailure(final int peer, final Throwable cause)
    {
        checkOpen("onLinkFailure", peer);
        if (!(cause instanceof HcclException) || ErrorCode.E_TCP_TRANSFER != ((HcclException)cause).errorCode())
        {
            violations.add("link failure not an E_TCP_TRANSFER HcclException: " + cause);
        }
        events.add("failure: " + cause.getMessage());
        ended = true;
    }

    @Override
    public void onPeerClosed(final int peer)
    {
        checkOpen("onPeerClosed", peer);
        events.add(PEER_CLOSED);
        ended = true;
    }

    @Override
    public void onAbort(final int peer, final long commId, final String reason)
    {
        checkOpen("onAbort", peer);
        if (reason.length() > Frames.ABORT_REASON_MAX_BYTES)
        {
            violations.add("ABORT reason of " + reason.length() + " characters");
        }
        events.add(describeAbort(commId, reason));
    }

    private void checkOpen(final String callback, final int rank)
    {
        if (peer != rank)
        {
            violations.add(callback + " about rank " + rank + ", not rank " + peer);
        }
        if (ended)
        {
            violations.add(callback + " after the link failed or the peer closed");
        }
    }

    static String describeMessage(
        final long commId, final long seq, final long tag, final int op, final int dt, final int ro, final int root,
        final long count, final int length)
    {
        return new StringBuilder(128).append("message comm=").append(Long.toHexString(commId))
            .append(" seq=").append(Long.toHexString(seq)).append(" tag=").append(Long.toHexString(tag))
            .append(" op=").append(op).append(" dt=").append(dt).append(" ro=").append(ro)
            .append(" root=").append(root).append(" count=").append(count).append(" length=").append(length)
            .toString();
    }

    static String describeDelivery(final String start, final int got, final long crc, final boolean complete)
    {
        return start + " got=" + got + " crc=" + Long.toHexString(crc) + (complete ? " complete" : "");
    }

    static String describeAbort(final long commId, final String reason)
    {
        return "abort comm=" + Long.toHexString(commId) + " reason=" + reason;
    }

    /** One message's sink: counts and checksums what it is given, and checks that against the declared length. */
    private final class Delivery implements MessageSink
    {
        private final String start;
        private final int length;
        private final int index;
        private final CRC32 crc = new CRC32();
        private int got;
        private boolean complete;
        private boolean threw;

        Delivery(final String start, final int length, final int index)
        {
            this.start = start;
            this.length = length;
            this.index = index;
        }

        @Override
        public void write(final ByteBuffer chunk)
        {
            if (ended || complete || threw)
            {
                violations.add("write to message " + index + " after " +
                    (ended ? "the link ended" : complete ? "its completion" : "its sink threw"));
            }
            if (ByteOrder.LITTLE_ENDIAN != chunk.order())
            {
                violations.add("chunk of message " + index + " not little-endian");
            }
            final int n = chunk.remaining();
            if ((long)got + n > length)
            {
                violations.add("message " + index + " of " + length + " bytes given " + ((long)got + n));
            }
            if (fault.at(FrameStreams.FaultPhase.WRITE, index))
            {
                threw = true;
                throw new IllegalStateException(FrameStreams.SINK_FAULT_MESSAGE);
            }
            crc.update(chunk);
            got += n;
        }

        @Override
        public void complete()
        {
            if (ended || complete || threw)
            {
                violations.add("message " + index + " completed again or after the link ended");
            }
            if (got != length)
            {
                violations.add("message " + index + " of " + length + " bytes completed after " + got);
            }
            complete = true;
            if (fault.at(FrameStreams.FaultPhase.COMPLETE, index))
            {
                threw = true;
                throw new IllegalStateException(FrameStreams.SINK_FAULT_MESSAGE);
            }
        }

        @Override
        public String toString()
        {
            return describeDelivery(start, got, crc.getValue(), complete);
        }
    }
}
