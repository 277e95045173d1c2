package dev.hccl.transport.shm;

import dev.hccl.api.spi.Inbound;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Supplier;

/**
 * Everything this rank holds for one connected peer: the shared segment, the link that writes to the peer, the
 * receiver that reads from it, and what identifies the peer's process for the liveness watch.
 */
final class ShmPeer
{
    private static final Logger LOG = LoggerFactory.getLogger(ShmPeer.class);

    final int rank;
    final int peer;
    final ShmSegment segment;
    final ShmLink link;
    final ShmReceiver receiver;
    /** The ring this rank reads: its trailer carries this rank's heartbeat. */
    final OneToOneRingBuffer inbound;
    /** The ring the peer reads: its trailer carries the peer's heartbeat. */
    final OneToOneRingBuffer outbound;
    /** The peer's pid as it published it. */
    final long pid;
    /** When the peer's process started, as it published it (wall-clock milliseconds), or 0 when unknown. */
    final long startMillis;
    /** The peer's process, when this process could see it at connect with the start time it published; else null. */
    final ProcessHandle process;

    /**
     * A connected peer.
     *
     * @param rank     this rank.
     * @param peer     the peer's rank.
     * @param segment  the pair's mapped segment.
     * @param address  what the peer published.
     * @param inbound  where its messages go.
     * @param checksum whether each DATA record carries a CRC32C of its payload ({@code HCCL_CHECKSUM}), as both ranks
     *                 agree.
     * @param arenaDamage what is wrong with the node arena's memory, or null ({@link ShmReceiver}).
     */
    ShmPeer(
        final int rank, final int peer, final ShmSegment segment, final ShmAddress address, final Inbound inbound,
        final boolean checksum, final Supplier<String> arenaDamage)
    {
        final boolean lo = rank < peer;
        this.rank = rank;
        this.peer = peer;
        this.segment = segment;
        this.inbound = segment.inbound(lo);
        this.outbound = segment.outbound(lo);
        this.link = new ShmLink(rank, peer, segment, outbound,
            checksum ? new ShmChecksum(segment.outboundRegion(lo)) : null);
        this.receiver = new ShmReceiver(rank, peer, segment, this.inbound, segment.inboundRegion(lo), link, inbound,
            checksum, arenaDamage);
        this.pid = address.pid();
        this.startMillis = address.startMillis();
        this.process = visibleProcess(address);
    }

    /**
     * The peer's process as this process sees it: the same pid with the same start time (a pid of another pid
     * namespace, or one reused since, has another or none).
     */
    private static ProcessHandle visibleProcess(final ShmAddress address)
    {
        if (0 == address.startMillis())
        {
            return null;
        }
        return ProcessHandle.of(address.pid())
            .filter(p -> ShmAddress.startMillis(p) == address.startMillis())
            .orElse(null);
    }

    /**
     * Fails the link of a peer the watch found dead once its ring is drained, and tells the communicator of a
     * failure it has not heard of yet; on the driving thread, as every callback about a peer is.
     *
     * @param to where to tell.
     * @return 1 when a failure was reported, else 0.
     */
    int settle(final Inbound to)
    {
        final Throwable notice = link.deathNotice();
        if (null != notice && receiver.drained() && link.fail(notice))
        {
            LOG.warn("rank {}: {}", rank, notice.getMessage());
        }
        final Throwable cause = link.takeUnreported();
        if (null == cause)
        {
            return 0;
        }
        try
        {
            to.onLinkFailure(peer, cause);
        }
        catch (final Throwable t)
        {
            LOG.error("rank {}: Inbound.onLinkFailure({}) threw", rank, peer, t);
        }
        return 1;
    }
}
