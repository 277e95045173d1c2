package dev.hccl.transport.shm;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.spi.DescriptorCodec;
import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.IncomingMessage;
import dev.hccl.api.spi.OpDescriptor;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.ControlledMessageHandler;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * The receiving side of the connection to one peer: reads the ring the peer writes and hands each message to the
 * communicator as it arrives ({@link IncomingMessage}). A payload chunk goes to the
 * {@link dev.hccl.api.spi.MessageSink} as a view of the shared memory itself,
 * with no copy: the sink copies or reduces straight out of the segment, during its {@code write} call only (the
 * space is the peer's again once the call returns).
 * <p>
 * Runs only on the thread that drives the engine; never lets an exception escape into the ring's read.
 */
final class ShmReceiver implements ControlledMessageHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(ShmReceiver.class);

    private static final int AWAIT_MESSAGE = 0;
    private static final int PAYLOAD = 1;
    /** After GOODBYE or a failure: nothing more is read. */
    private static final int DONE = 2;


    private final int rank;
    private final int peer;
    /** The pair's segment, named when its memory faults. */
    private final ShmSegment segment;
    private final OneToOneRingBuffer ring;
    private final ShmLink link;
    private final Inbound inbound;
    /** The one view of the ring's memory handed to sinks, moved to each chunk. */
    private final ByteBuffer view;
    /** What is wrong with the node arena's memory, or null. */
    private final Supplier<String> arenaDamage;
    /** The CRC32C that ends each DATA record ({@code HCCL_CHECKSUM}), or null for none. */
    private final ShmChecksum checksum;

    private int state = AWAIT_MESSAGE;
    /** The message whose payload is arriving. */
    private final IncomingMessage message;
    private int emptyPolls;
    /** Decodes headers' fingerprints, one descriptor per run of equal ones; this receiver's alone. */
    private final DescriptorCodec descriptors = new DescriptorCodec();

    /**
     * A receiver.
     *
     * @param rank    this rank.
     * @param peer    the peer.
     * @param segment the pair's segment.
     * @param ring    the ring the peer writes.
     * @param region  the ring's memory, indexed as the ring's buffer is.
     * @param link     the link to the same peer, whose state this follows.
     * @param inbound  where messages go.
     * @param checksum whether each DATA record ends with a CRC32C of its payload ({@code HCCL_CHECKSUM}).
     * @param arenaDamage what is wrong with the node arena's memory, or null ({@link ShmArena#damage()}): a fault
     *                    in the arena surfaces late from compiled code, in whatever this thread does next, here too.
     */
    ShmReceiver(
        final int rank,
        final int peer,
        final ShmSegment segment,
        final OneToOneRingBuffer ring,
        final ByteBuffer region,
        final ShmLink link,
        final Inbound inbound,
        final boolean checksum,
        final Supplier<String> arenaDamage)
    {
        this.arenaDamage = arenaDamage;
        this.rank = rank;
        this.peer = peer;
        this.segment = segment;
        this.ring = ring;
        this.link = link;
        this.inbound = inbound;
        // duplicate() resets the byte order; element data travels in the little-endian order DataType prescribes.
        this.view = region.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        this.checksum = checksum ? new ShmChecksum(region) : null;
        this.message = new IncomingMessage(inbound, peer, this::deliveryFailed);
    }

    /**
     * Reads what the peer has written, at most {@code limit} records.
     *
     * @param limit the most records to read, so that one poll stays short.
     * @return the records read.
     */
    int poll(final int limit)
    {
        if (DONE == state || !link.isOpen())
        {
            return 0;
        }
        final int read;
        try
        {
            read = ring.controlledRead(this, limit);
        }
        catch (final InternalError fault)
        {
            // The ring's own reads of headers and positions faulted (the handler catches its own).
            final HcclException damaged = damaged(fault);
            if (null == damaged)
            {
                throw fault;
            }
            stop(damaged);
            return 0;
        }
        emptyPolls = 0 == read ? emptyPolls + 1 : 0;
        return read;
    }

    /**
     * Whether everything the peer wrote has been read: the last two polls found nothing (one may end at the ring's
     * wrap with only padding read), or nothing more will be read.
     *
     * @return true when drained.
     */
    boolean drained()
    {
        return DONE == state || emptyPolls >= 2;
    }

    @Override
    public Action onMessage(final int type, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (DONE == state)
        {
            return Action.BREAK;
        }
        try
        {
            switch (type)
            {
                case ShmRecords.DATA:
                    onData(buffer, index, length);
                    // Frees the chunk's space at once, for the peer's next write.
                    return Action.COMMIT;

                case ShmRecords.MESSAGE:
                    onMessageHeader(buffer, index, length);
                    break;

                case ShmRecords.ABORT:
                    onAbort(buffer, index, length);
                    break;

                case ShmRecords.GOODBYE:
                    onGoodbye();
                    break;

                default:
                    protocolError("unknown record type " + type);
                    break;
            }
        }
        catch (final Throwable t)
        {
            final HcclException damaged = damaged(t);
            if (null != damaged)
            {
                stop(damaged);
                return Action.BREAK;
            }
            // Only a bug gets here: every callback into the communicator is guarded on its own.
            LOG.error("rank {}: internal error receiving from rank {}", rank, peer, t);
            stop(new IllegalStateException("internal error receiving from rank " + peer + ": " + t, t));
        }
        return DONE == state ? Action.BREAK : Action.CONTINUE;
    }

    /**
     * Damaged shared memory behind a fault: this pair's segment truncated, or else, for a memory fault (which the JVM
     * may throw a little after the access, from compiled code), the node arena's; null when neither is.
     */
    private HcclException damaged(final Throwable fault)
    {
        final HcclException truncated = ShmDamage.truncated(rank, peer, segment, "reading from rank " + peer, fault);
        if (null != truncated || !(fault instanceof InternalError))
        {
            return truncated;
        }
        final String arena = arenaDamage.get();
        return null == arena ? null : new HcclException(ErrorCode.E_SHM_SEGMENT, rank, HcclException.UNKNOWN_RANK,
            null, HcclException.NO_SEQUENCE, arena, fault);
    }

    private void onMessageHeader(final MutableDirectBuffer b, final int index, final int length)
    {
        if (PAYLOAD == state)
        {
            protocolError("a message header in the middle of a message's payload");
            return;
        }
        if (ShmRecords.MESSAGE_LENGTH != length)
        {
            protocolError("a message header of " + length + " bytes");
            return;
        }
        final int op = b.getByte(index + ShmRecords.OPERATION_OFFSET) & 0xFF;
        final int dt = b.getByte(index + ShmRecords.DATA_TYPE_OFFSET) & 0xFF;
        final int ro = b.getByte(index + ShmRecords.REDUCE_OP_OFFSET) & 0xFF;
        final int payloadLength = b.getInt(index + ShmRecords.LENGTH_OFFSET);
        final OpDescriptor desc = descriptors.decode(
            op, dt, ro, b.getInt(index + ShmRecords.ROOT_OFFSET), b.getLong(index + ShmRecords.COUNT_OFFSET));
        if (null == desc || payloadLength < 0)
        {
            protocolError("a bad message header (operation " + op + ", data type " + dt + ", reduction " + ro +
                ", length " + payloadLength + ")");
            return;
        }
        if (message.begin(b.getLong(index + ShmRecords.COMM_ID_OFFSET), b.getLong(index + ShmRecords.SEQ_OFFSET),
            b.getLong(index + ShmRecords.TAG_OFFSET), desc, payloadLength))
        {
            state = PAYLOAD;
        }
    }

    private void onData(final MutableDirectBuffer b, final int index, final int recordLength)
    {
        if (PAYLOAD != state)
        {
            protocolError("a data record outside a message");
            return;
        }
        final int length = null == checksum ? recordLength : recordLength - ShmRecords.CHECKSUM_BYTES;
        if (length <= 0 || length > message.remaining())
        {
            protocolError("a data record of " + length + " bytes where " + message.remaining() + " remain");
            return;
        }
        if (null != checksum && checksum.of(index, length) != b.getInt(index + length))
        {
            // Checked before the sink reads the chunk: the changed bytes never reach the destination.
            final HcclException damage =
                ShmDamage.checksumMismatch(rank, peer, segment, message.descriptor().operation(), message.seq());
            LOG.warn("rank {}: {}", rank, damage.detail());
            stop(damage);
            return;
        }
        view.clear().position(index).limit(index + length);
        if (message.write(view) && 0 == message.remaining())
        {
            state = AWAIT_MESSAGE;
            message.complete();
        }
    }

    private void onAbort(final MutableDirectBuffer b, final int index, final int length)
    {
        if (PAYLOAD == state)
        {
            protocolError("an ABORT in the middle of a message's payload");
            return;
        }
        final int reasonLength = length < ShmRecords.ABORT_REASON_OFFSET ? -1 :
            b.getInt(index + ShmRecords.ABORT_LENGTH_OFFSET);
        if (reasonLength < 0 || reasonLength > length - ShmRecords.ABORT_REASON_OFFSET)
        {
            protocolError("an ABORT record of " + length + " bytes with a reason of " + reasonLength);
            return;
        }
        final long commId = b.getLong(index + ShmRecords.COMM_ID_OFFSET);
        final byte[] reason = new byte[reasonLength];
        b.getBytes(index + ShmRecords.ABORT_REASON_OFFSET, reason);
        try
        {
            inbound.onAbort(peer, commId, new String(reason, StandardCharsets.UTF_8));
        }
        catch (final Throwable t)
        {
            LOG.error("rank {}: Inbound.onAbort({}) threw", rank, peer, t);
        }
    }

    private void onGoodbye()
    {
        if (PAYLOAD == state)
        {
            stop(failure("rank " + peer + " closed its side in the middle of a message over shared memory", null));
            return;
        }
        state = DONE;
        if (link.peerClosed())
        {
            LOG.debug("rank {}: rank {} said goodbye", rank, peer);
            try
            {
                inbound.onPeerClosed(peer);
            }
            catch (final Throwable t)
            {
                LOG.error("rank {}: Inbound.onPeerClosed({}) threw", rank, peer, t);
            }
        }
    }

    private void protocolError(final String details)
    {
        LOG.warn("rank {}: protocol error from rank {} over shared memory: {}", rank, peer, details);
        stop(failure("protocol error from rank " + peer + " over shared memory: " + details, null));
    }

    private void deliveryFailed(final Throwable t)
    {
        final HcclException truncated = ShmDamage.truncated(rank, peer, segment, "reading from rank " + peer, t);
        if (null != truncated)
        {
            // The sink read the ring's memory, which faulted.
            stop(truncated);
            return;
        }
        LOG.error("rank {}: the receiver failed on a message from rank {}", rank, peer, t);
        stop(failure("the receiver of messages from rank " + peer + " over shared memory threw " + t, t));
    }

    private HcclException failure(final String why, final Throwable cause)
    {
        return new HcclException(ErrorCode.E_REMOTE, rank, peer, null, HcclException.NO_SEQUENCE, why, cause);
    }

    /** Reads nothing more and fails the link; the engine reports it. */
    private void stop(final Throwable cause)
    {
        state = DONE;
        message.drop();
        link.fail(cause);
    }
}
