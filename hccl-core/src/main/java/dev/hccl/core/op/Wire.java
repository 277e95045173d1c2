package dev.hccl.core.op;

import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.core.mailbox.Mailbox;
import dev.hccl.core.mailbox.Outbox;

import java.nio.ByteBuffer;

/**
 * A communicator's messages, both ways, in its own numbering: a send goes to the {@link Outbox}, a receive is posted
 * in the {@link Mailbox}, each with the peer's rank in the root communicator, whose links the communicators split
 * from it share. Thread-safe, as both ends are.
 */
public final class Wire
{
    private final Mailbox mailbox;
    private final RankNumbering numbering;

    /**
     * @param mailbox   the communicator's mailbox, with its outbox.
     * @param numbering the communicator's ranks in the root communicator.
     */
    public Wire(final Mailbox mailbox, final RankNumbering numbering)
    {
        this.mailbox = mailbox;
        this.numbering = numbering;
    }

    /**
     * Sends a message, eagerly or by rendezvous.
     *
     * @param peer    the receiver.
     * @param seq     the sequence number.
     * @param tag     the tag.
     * @param desc    this rank's operation.
     * @param payload the bytes, from position to limit; not to be reused until {@code done}.
     * @param done    completes when the payload may be reused.
     */
    void send(
        final int peer, final long seq, final long tag, final OpDescriptor desc, final ByteBuffer payload,
        final Request done)
    {
        mailbox.outbox().send(numbering.global(peer), seq, tag, desc, payload, done);
    }

    /**
     * Posts a receive.
     *
     * @param peer       the sender.
     * @param seq        the sequence number.
     * @param tag        the tag.
     * @param desc       this rank's operation.
     * @param dst        the destination.
     * @param offset     first byte of the destination.
     * @param length     bytes expected.
     * @param reducer    the kernel, or null to copy.
     * @param left       with a reducer, the left operand, or null to reduce into {@code dst} as it is.
     * @param leftOffset first byte of {@code left}.
     * @param request    completes when the data is in place.
     */
    void post(
        final int peer, final long seq, final long tag, final OpDescriptor desc, final ByteBuffer dst,
        final int offset, final int length, final Reducer reducer, final ByteBuffer left, final int leftOffset,
        final Request request)
    {
        mailbox.post(numbering.global(peer), seq, tag, desc, dst, offset, length, reducer, left, leftOffset, request);
    }

    /**
     * How many collectives a peer said it issued when it closed its communicator.
     *
     * @param peer the peer, in this communicator.
     * @return the count, or -1 while it has not closed.
     */
    long issuedBeforeClosing(final int peer)
    {
        return mailbox.closings().issuedBy(numbering.global(peer));
    }
}
