package dev.hccl.core.transport;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.MessageSink;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.PeerEndpoint;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Transport;
import dev.hccl.api.spi.TransportKind;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The in-JVM transport, for ranks as threads: a send hands the payload to the receiver's mailbox on the sender's
 * thread, so a posted receive is filled (or reduced into) straight from the sender's buffer, with no copy between.
 * It ignores {@code HCCL_CHECKSUM}: with no copy, a CRC would compare the sender's bytes with themselves.
 */
public final class InProcessTransport implements Transport
{
    /** Ranks as threads: a send hands its message over before it returns; the cost model keeps its defaults. */
    public static final TransportKind KIND = TransportKind.inProcess();

    private final InProcessHub hub;
    private final int rank;
    private final Link[] links;
    private volatile boolean closed;

    InProcessTransport(final InProcessHub hub, final int rank)
    {
        this.hub = hub;
        this.rank = rank;
        this.links = new Link[hub.worldSize()];
        for (int peer = 0; peer < links.length; peer++)
        {
            links[peer] = new InProcessLink(peer);
        }
    }

    @Override
    public String name()
    {
        return "inproc";
    }

    /**
     * Every rank of the hub is connected from the start.
     *
     * @return the ranks of {@code peers}.
     */
    @Override
    public Set<Integer> connect(final PeerEndpoint self, final List<PeerEndpoint> peers, final long deadlineNanos)
    {
        final Set<Integer> ranks = new TreeSet<>();
        peers.forEach(p -> ranks.add(p.rank()));
        return ranks;
    }

    @Override
    public Link link(final int peer)
    {
        return links[peer];
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        for (int peer = 0; peer < links.length; peer++)
        {
            final Inbound inbound = hub.inbound(peer);
            if (peer != rank && inbound != null)
            {
                inbound.onPeerClosed(rank);
            }
        }
    }

    private final class InProcessLink implements Link
    {
        private final int peer;

        InProcessLink(final int peer)
        {
            this.peer = peer;
        }

        @Override
        public int peer()
        {
            return peer;
        }

        /** Threads of this process cannot fall silent while it runs. */
        @Override
        public long silentMillis()
        {
            return 0;
        }

        @Override
        public void send(
            final long commId,
            final long seq,
            final long tag,
            final OpDescriptor desc,
            final ByteBuffer payload,
            final Request done)
        {
            if (closed)
            {
                done.fail(new HcclException(ErrorCode.E_UNAVAIL, "transport of rank " + rank + " is closed"));
                return;
            }
            try
            {
                final MessageSink sink = hub.inbound(peer).onMessage(rank, commId, seq, tag, desc, payload.remaining());
                if (payload.hasRemaining())
                {
                    sink.write(payload.duplicate());
                }
                sink.complete();
                done.complete();
            }
            catch (final RuntimeException ex)
            {
                done.fail(ex);
                throw ex;
            }
        }

        @Override
        public void abort(final long commId, final String reason)
        {
            hub.inbound(peer).onAbort(rank, commId, reason);
        }
    }
}
