package dev.hccl.core.mailbox;

import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Tags;

/**
 * The operation fingerprint check of one communicator's mailbox: every collective message carries its sender's
 * operation ({@link OpDescriptor}), which must be the one this rank runs at that sequence number, so that ranks that
 * issue different collectives fail at once, naming both, instead of hanging or mixing data. It keeps the operation
 * running now and the last {@link #RECENT_OPS}, so that a late peer's message names what ran here.
 * <p>
 * Not thread-safe: guarded by its mailbox's lock. Problems are messages in which {@code {peer}} stands for the
 * sender's rank.
 */
final class OpFingerprints
{
    private static final int RECENT_OPS = 64;

    private long expectedSeq = -1;
    private OpDescriptor expectedDesc;
    /** The last operations, by sequence number modulo the length. */
    private final OpDescriptor[] recent = new OpDescriptor[RECENT_OPS];

    /**
     * This rank starts collective {@code seq}.
     *
     * @param seq  the sequence number.
     * @param desc this rank's operation.
     */
    void begin(final long seq, final OpDescriptor desc)
    {
        expectedSeq = seq;
        expectedDesc = desc;
        recent[(int)(seq % RECENT_OPS)] = desc;
    }

    /**
     * Whether a message held since before collective {@code seq} began cannot be for this rank's operations.
     *
     * @param u    the message.
     * @param seq  the collective that begins.
     * @param desc this rank's operation there.
     * @return the problem, or null.
     */
    static String heldProblem(final Unexpected u, final long seq, final OpDescriptor desc)
    {
        if (u.seq == seq && !desc.equals(u.desc))
        {
            return mismatch(u.desc, seq, desc);
        }
        if (u.seq < seq)
        {
            // It came after this rank had finished that operation and before this one began: no receive will ever
            // take it, so the ranks disagreed on how much to send.
            return "{peer} sent " + u.length + " bytes for operation #" + u.seq + " (" + u.desc + ", tag " +
                Tags.describe(u.tag) + ") that no receive took: it came after this rank had finished that " +
                "operation, so the ranks disagreed on how much to send (the counts of a V collective, say)";
        }
        return null;
    }

    /**
     * Whether a message arriving now cannot be for this rank's operation at its sequence number.
     *
     * @param seq  its sequence number.
     * @param tag  its tag.
     * @param desc its sender's operation.
     * @return the problem, or null.
     */
    String arrivalProblem(final long seq, final long tag, final OpDescriptor desc)
    {
        final boolean collective = Tags.phase(tag) != Tags.P2P_PHASE;
        if (collective && seq == expectedSeq && !desc.equals(expectedDesc))
        {
            return mismatch(desc, seq, expectedDesc);
        }
        if (collective && seq < expectedSeq)
        {
            // This rank finished #seq without this message (a broadcast root only sends): if the peer ran
            // another operation there, say so; the same operation arriving late would be a protocol bug.
            final OpDescriptor ran = expectedSeq - seq < RECENT_OPS ? recent[(int)(seq % RECENT_OPS)] : null;
            return ran != null && !ran.equals(desc) ? mismatch(desc, seq, ran) :
                "{peer} sent a message for operation #" + seq + " (" + desc + ", tag " + Tags.describe(tag) +
                ") after this rank finished it";
        }
        return null;
    }

    /**
     * Whether a message fits the receive it meets: the same length and, for point-to-point, the same type and count.
     *
     * @param theirs the sender's operation.
     * @param length the message's bytes.
     * @param recv   the receive.
     * @return the problem, or null.
     */
    static String matchProblem(final OpDescriptor theirs, final int length, final PostedRecv recv)
    {
        final boolean p2p = Tags.phase(recv.tag) == Tags.P2P_PHASE;
        if (p2p && (theirs.dataType() != recv.mine.dataType() || theirs.count() != recv.mine.count()))
        {
            return "{peer} issued " + theirs + " but this rank issued " + recv.mine;
        }
        if (length != recv.length)
        {
            if (!theirs.hasCount() && theirs.equals(recv.mine) && null != theirs.dataType())
            {
                return blockMismatch(theirs, length, recv);
            }
            return "{peer} sent " + length + " bytes for " + theirs + " (tag " + Tags.describe(recv.tag) +
                ") but this rank expected " + recv.length + " for " + recv.mine;
        }
        return null;
    }

    /**
     * A message of the same operation, one without a count in its fingerprint ({@code allToAllV}), has the wrong
     * length: the sender's count for this rank and this rank's count for the sender differ, which only the pair's
     * messages show. Says it in elements and in the arguments' names.
     */
    private static String blockMismatch(final OpDescriptor theirs, final int length, final PostedRecv recv)
    {
        final int size = theirs.dataType().size();
        return "{peer} sent a message of " + length + " bytes (" + length / size + " " + theirs.dataType() +
            " elements) in " + theirs + " (tag " + Tags.describe(recv.tag) + ") where this rank expected " +
            recv.length + " bytes (" +
            recv.length / size + " elements): {peer}'s sendCounts entry for this rank and this rank's recvCounts " +
            "entry for {peer} differ, and must be equal";
    }

    private static String mismatch(final OpDescriptor theirs, final long seq, final OpDescriptor mine)
    {
        return "operation mismatch at #" + seq + ": {peer} issued " + theirs + " while this rank issued " + mine +
            "; every rank must issue the same collectives in the same order";
    }
}
