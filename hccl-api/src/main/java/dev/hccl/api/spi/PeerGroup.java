package dev.hccl.api.spi;

import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;

import java.nio.ByteBuffer;

/**
 * The point-to-point primitives an algorithm is written against: asynchronous sends and receives between the ranks
 * of one communicator, within one operation.
 * <p>
 * <b>Threads.</b> An operation runs on one thread, the operation's thread (the communicator's execution stream, or
 * the caller's), and calls these methods from it. An algorithm may hand part of its schedule to a thread of its own
 * for the length of the operation, as the hierarchical all-reduce overlaps its levels: that thread may call
 * {@code send}, {@code recv}, {@code recvReduce} and {@code await}, which are safe from several threads at once, but
 * takes {@link #scratch} from buffers of its own, never from the group's, and is done before the operation returns.
 * <p>
 * Offsets and lengths are in bytes, absolute within the buffer; no buffer's position or limit changes.
 */
public interface PeerGroup
{
    /** How many slots {@link #scratch} has. */
    int SCRATCH_SLOTS = 3;

    /**
     * This rank.
     *
     * @return 0 to {@link #size()} - 1.
     */
    int rank();

    /**
     * Number of ranks.
     *
     * @return the world size.
     */
    int size();

    /**
     * Starts sending {@code length} bytes of {@code src} to {@code peer}.
     *
     * @param peer   the receiver.
     * @param tag    the tag the receiver posts ({@link Tags#of}).
     * @param src    the data; not to be changed until the request completes.
     * @param offset first byte.
     * @param length bytes; 0 sends an empty message.
     * @return the request.
     */
    Request send(int peer, long tag, ByteBuffer src, int offset, int length);

    /**
     * Starts receiving {@code length} bytes from {@code peer} into {@code dst}.
     *
     * @param peer   the sender.
     * @param tag    the sender's tag.
     * @param dst    the destination.
     * @param offset first byte.
     * @param length bytes expected; a message of another length fails the operation.
     * @return the request.
     */
    Request recv(int peer, long tag, ByteBuffer dst, int offset, int length);

    /**
     * Starts receiving {@code length} bytes from {@code peer} and reducing them into {@code dst}
     * ({@code dst = dst op received}), as they arrive.
     *
     * @param peer    the sender.
     * @param tag     the sender's tag.
     * @param dst     destination and left operand.
     * @param offset  first byte.
     * @param length  bytes expected, a multiple of the element size.
     * @param reducer the kernel.
     * @return the request.
     */
    Request recvReduce(int peer, long tag, ByteBuffer dst, int offset, int length, Reducer reducer);

    /**
     * Starts receiving {@code length} bytes from {@code peer} and reducing them with this rank's own operand into
     * {@code dst} ({@code dst = left op received}), as they arrive: the out-of-place form of
     * {@link #recvReduce(int, long, ByteBuffer, int, int, Reducer)}, which spares copying {@code left} into
     * {@code dst} beforehand (a whole pass over cold memory) by copying each piece just before it is reduced, while
     * it is in cache. {@code dst}'s bytes are not read. This default copies first, with the same result.
     *
     * @param peer       the sender.
     * @param tag        the sender's tag.
     * @param dst        destination.
     * @param offset     first byte of {@code dst}.
     * @param length     bytes expected, a multiple of the element size.
     * @param reducer    the kernel.
     * @param left       the left operand; not changed.
     * @param leftOffset first byte of {@code left}.
     * @return the request.
     */
    default Request recvReduce(
        final int peer, final long tag, final ByteBuffer dst, final int offset, final int length, final Reducer reducer,
        final ByteBuffer left, final int leftOffset)
    {
        dst.put(offset, left, leftOffset, length);
        return recvReduce(peer, tag, dst, offset, length, reducer);
    }

    /**
     * Waits for a request, bounded by the execution timeout.
     *
     * @param request a request of this operation.
     * @throws dev.hccl.api.HcclException when it failed or timed out; the communicator has then failed.
     */
    void await(Request request);

    /**
     * The memory this rank shares with the ranks of this group on its node, when the transports offer it
     * ({@link NodeArena}): member {@code m} is rank {@link NodeArena#rankOf rankOf(m)} of this group, and the members
     * are fewer than the group's ranks when the group spans nodes. Only the operation's thread uses it.
     *
     * @return the arena, or null when there is none (the default): the algorithm then passes messages.
     */
    default NodeArena arena()
    {
        return null;
    }

    /**
     * Waits until a signal of {@link #arena()} is at least a value, bounded by the execution timeout as
     * {@link #await} is, and waiting as the communicator's wait policy says (never spinning where the ranks of the
     * node outnumber its cores).
     *
     * @param index   the signal's byte index in the arena's memory.
     * @param atLeast the value awaited; signals only grow.
     * @param writer  the rank of this group that writes the signal (a member), named when the wait fails.
     * @throws dev.hccl.api.HcclException when the communicator failed or the wait timed out.
     * @throws IllegalStateException      when this group has no arena.
     */
    default void awaitSignal(final int index, final long atLeast, final int writer)
    {
        throw new IllegalStateException("this group has no node arena");
    }

    /**
     * The operation this group runs, as every rank must issue it: what an algorithm that passes no messages (the node
     * arena's) shows its peers, so that ranks that issued different operations fail instead of mixing their data.
     *
     * @return the operation's fingerprint, or null when not known (the default): nothing is then checked.
     */
    default OpDescriptor operation()
    {
        return null;
    }

    /**
     * The error for a peer found running another operation than this rank's {@link #operation()}; the algorithm
     * throws it, and the communicator fails with it.
     *
     * @param peer   the rank of this group that runs it.
     * @param theirs what it runs, or null when what it shows cannot be read.
     * @return the exception, {@link ErrorCode#E_MISMATCH}, naming both operations.
     */
    default HcclException mismatch(final int peer, final OpDescriptor theirs)
    {
        final OpDescriptor mine = operation();
        return new HcclException(ErrorCode.E_MISMATCH, rank(), peer,
            null == mine ? Operation.INIT : mine.operation(), HcclException.NO_SEQUENCE,
            "operation mismatch: rank " + peer + " issued " + (null == theirs ? "an unreadable operation" : theirs) +
            " while this rank issued " + mine + "; every rank must issue the same collectives in the same order",
            null);
    }

    /**
     * A direct scratch buffer owned by the communicator, valid for the current operation, taken on the operation's
     * thread only. Two calls with different slots return buffers that do not overlap, and the communicator itself
     * never uses these slots. Slots 0 and 1 are any algorithm's; slot 2 is reserved for composed algorithms such as
     * hierarchical, which hold it across calls into the algorithms they are made of: an algorithm that may run inside
     * another never takes it.
     *
     * @param slot  0 to {@link #SCRATCH_SLOTS} - 1.
     * @param bytes the size needed.
     * @return a buffer with at least {@code bytes} capacity, position 0.
     */
    ByteBuffer scratch(int slot, int bytes);


    /**
     * Bytes per pipelined segment.
     *
     * @return the segment size, a multiple of 8.
     */
    int segmentBytes();

    /**
     * Which node each rank of this group runs on, for schedules with a level per node and for algorithms that keep
     * traffic within a node where they can: the one answer, which {@link #node(int)} reads.
     *
     * @return the layout of {@link #size()} ranks; {@link RankLayout#singleNode} when the topology is not known.
     */
    RankLayout layout();

    /**
     * The node a rank of this group runs on, as {@link #layout()} says.
     *
     * @param rank a rank of this group.
     * @return the node, numbered from 0 in order of the nodes' lowest ranks.
     */
    default int node(final int rank)
    {
        return layout().nodeOf(rank);
    }
}
