package dev.hccl.api;

import java.nio.ByteBuffer;

/**
 * A group of ranks that execute collectives together, created once and reused, as {@code HcclComm} or
 * {@code ncclComm_t}.
 * <p>
 * <b>Buffers.</b> Data starts at each buffer's {@code position()}; no call changes position or limit. A buffer whose
 * {@code remaining()} is too small is an {@link IllegalArgumentException} naming the argument, the bytes needed and
 * the bytes available. Direct buffers are used in place (zero copy); heap buffers and arrays go through a staging
 * copy. Passing the same memory as send and receive buffer means in-place and is supported. A buffer must not be
 * touched by the caller until its operation completes.
 * <p>
 * <b>Ordering.</b> Every rank issues the same collectives in the same order. Each communicator executes its
 * operations in issue order on its own execution stream; a blocking call is its asynchronous twin plus
 * {@link CommFuture#join()}. Point-to-point {@link #send}/{@link #recv} between two ranks match in issue order.
 * <p>
 * <b>Errors.</b> Argument problems are raised by the calling method before anything goes on the wire, and leave the
 * communicator usable. Failures on the wire (a dead peer, a timeout, ranks issuing different collectives) fail the
 * communicator: the failed operation and every pending and later one complete with an {@link HcclException} that
 * names the rank and the operation.
 * <p>
 * Methods may be called from any thread; operations from several threads are ordered as the calls are.
 */
public interface Communicator extends AutoCloseable
{
    /**
     * This rank's index in the communicator.
     *
     * @return 0 to {@link #worldSize()} - 1.
     */
    int rank();

    /**
     * Number of ranks in the communicator.
     *
     * @return the world size, at least 1.
     */
    int worldSize();

    /**
     * This rank's index among the ranks of its node.
     *
     * @return 0 to {@link #localSize()} - 1.
     */
    int localRank();

    /**
     * Number of ranks on this rank's node.
     *
     * @return at least 1.
     */
    int localSize();

    /**
     * Which ranks share a node.
     *
     * @return the topology seen at creation.
     */
    Topology topology();

    /**
     * Reduces {@code count} elements across all ranks; every rank receives the result.
     *
     * @param send  this rank's input, {@code count} elements.
     * @param recv  the result, {@code count} elements; may be the same memory as {@code send}.
     * @param count elements per rank, at least 0.
     * @param type  element type.
     * @param op    reduction.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void allReduce(ByteBuffer send, ByteBuffer recv, long count, DataType type, ReduceOp op);

    /**
     * Asynchronous {@link #allReduce}.
     *
     * @param send  this rank's input.
     * @param recv  the result.
     * @param count elements per rank.
     * @param type  element type.
     * @param op    reduction.
     * @return completes when {@code recv} holds the result.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture allReduceAsync(ByteBuffer send, ByteBuffer recv, long count, DataType type, ReduceOp op);

    /**
     * Gathers {@code sendCount} elements from every rank into {@code recv}, in rank order, on every rank.
     *
     * @param send      this rank's contribution, {@code sendCount} elements.
     * @param recv      {@code worldSize * sendCount} elements; in place when {@code send} is this rank's block of it.
     * @param sendCount elements per rank.
     * @param type      element type.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void allGather(ByteBuffer send, ByteBuffer recv, long sendCount, DataType type);

    /**
     * Asynchronous {@link #allGather}.
     *
     * @param send      this rank's contribution.
     * @param recv      the gathered result.
     * @param sendCount elements per rank.
     * @param type      element type.
     * @return completes when {@code recv} holds the result.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture allGatherAsync(ByteBuffer send, ByteBuffer recv, long sendCount, DataType type);

    /**
     * Reduces {@code worldSize * recvCount} elements across ranks; rank {@code r} receives block {@code r} of the
     * result.
     *
     * @param send      {@code worldSize * recvCount} elements.
     * @param recv      {@code recvCount} elements.
     * @param recvCount elements each rank receives.
     * @param type      element type.
     * @param op        reduction.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void reduceScatter(ByteBuffer send, ByteBuffer recv, long recvCount, DataType type, ReduceOp op);

    /**
     * Asynchronous {@link #reduceScatter}.
     *
     * @param send      the input.
     * @param recv      this rank's block of the result.
     * @param recvCount elements each rank receives.
     * @param type      element type.
     * @param op        reduction.
     * @return completes when {@code recv} holds the result.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture reduceScatterAsync(ByteBuffer send, ByteBuffer recv, long recvCount, DataType type, ReduceOp op);

    /**
     * Copies {@code count} elements from {@code root} to every rank.
     *
     * @param buf   the data at the root; the destination elsewhere.
     * @param count elements.
     * @param type  element type.
     * @param root  the rank that sends.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void broadcast(ByteBuffer buf, long count, DataType type, int root);

    /**
     * Asynchronous {@link #broadcast}.
     *
     * @param buf   the data at the root; the destination elsewhere.
     * @param count elements.
     * @param type  element type.
     * @param root  the rank that sends.
     * @return completes when {@code buf} holds the data.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture broadcastAsync(ByteBuffer buf, long count, DataType type, int root);

    /**
     * Reduces {@code count} elements across ranks into {@code recv} at {@code root}.
     *
     * @param send  this rank's input.
     * @param recv  the result, used at the root only (may be null elsewhere).
     * @param count elements.
     * @param type  element type.
     * @param op    reduction.
     * @param root  the rank that receives.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void reduce(ByteBuffer send, ByteBuffer recv, long count, DataType type, ReduceOp op, int root);

    /**
     * Asynchronous {@link #reduce}.
     *
     * @param send  this rank's input.
     * @param recv  the result at the root.
     * @param count elements.
     * @param type  element type.
     * @param op    reduction.
     * @param root  the rank that receives.
     * @return completes when the operation is done on this rank.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture reduceAsync(ByteBuffer send, ByteBuffer recv, long count, DataType type, ReduceOp op, int root);

    /**
     * Sends block {@code j} of {@code send} to rank {@code j} and receives rank {@code j}'s block {@code rank()} into
     * block {@code j} of {@code recv}.
     *
     * @param send         {@code worldSize * countPerRank} elements.
     * @param recv         {@code worldSize * countPerRank} elements; may be the same memory as {@code send}.
     * @param countPerRank elements per block.
     * @param type         element type.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void allToAll(ByteBuffer send, ByteBuffer recv, long countPerRank, DataType type);

    /**
     * Asynchronous {@link #allToAll}.
     *
     * @param send         the blocks to send.
     * @param recv         the blocks received.
     * @param countPerRank elements per block.
     * @param type         element type.
     * @return completes when {@code recv} holds every block.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture allToAllAsync(ByteBuffer send, ByteBuffer recv, long countPerRank, DataType type);

    /**
     * Sends {@code count} elements to {@code peer}, which must issue a matching {@link #recv}.
     *
     * @param buf   the data.
     * @param count elements.
     * @param type  element type.
     * @param peer  the receiving rank, not this one.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void send(ByteBuffer buf, long count, DataType type, int peer);

    /**
     * Asynchronous {@link #send}.
     *
     * @param buf   the data.
     * @param count elements.
     * @param type  element type.
     * @param peer  the receiving rank.
     * @return completes when {@code buf} may be reused.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture sendAsync(ByteBuffer buf, long count, DataType type, int peer);

    /**
     * Receives {@code count} elements from {@code peer}'s matching {@link #send}.
     *
     * @param buf   the destination.
     * @param count elements.
     * @param type  element type.
     * @param peer  the sending rank, not this one.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void recv(ByteBuffer buf, long count, DataType type, int peer);

    /**
     * Asynchronous {@link #recv}.
     *
     * @param buf   the destination.
     * @param count elements.
     * @param type  element type.
     * @param peer  the sending rank.
     * @return completes when {@code buf} holds the data.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture recvAsync(ByteBuffer buf, long count, DataType type, int peer);

    /**
     * Returns once every rank has entered the barrier.
     *
     * @throws HcclException when the operation fails.
     */
    void barrier();

    /**
     * Asynchronous {@link #barrier}.
     *
     * @return completes once every rank has entered the barrier.
     */
    CommFuture barrierAsync();

    /**
     * In-place all-reduce of a {@code float[]}.
     *
     * @param data input and result.
     * @param op   reduction.
     */
    void allReduce(float[] data, ReduceOp op);

    /**
     * In-place all-reduce of a {@code double[]}.
     *
     * @param data input and result.
     * @param op   reduction.
     */
    void allReduce(double[] data, ReduceOp op);

    /**
     * In-place all-reduce of an {@code int[]}.
     *
     * @param data input and result.
     * @param op   reduction.
     */
    void allReduce(int[] data, ReduceOp op);

    /**
     * In-place all-reduce of a {@code long[]}.
     *
     * @param data input and result.
     * @param op   reduction.
     */
    void allReduce(long[] data, ReduceOp op);

    /**
     * In-place broadcast of a {@code float[]} from {@code root}.
     *
     * @param data the data at the root; the destination elsewhere.
     * @param root the rank that sends.
     */
    void broadcast(float[] data, int root);

    /**
     * In-place broadcast of a {@code double[]} from {@code root}.
     *
     * @param data the data at the root; the destination elsewhere.
     * @param root the rank that sends.
     */
    void broadcast(double[] data, int root);

    /**
     * In-place broadcast of an {@code int[]} from {@code root}.
     *
     * @param data the data at the root; the destination elsewhere.
     * @param root the rank that sends.
     */
    void broadcast(int[] data, int root);

    /**
     * In-place broadcast of a {@code long[]} from {@code root}.
     *
     * @param data the data at the root; the destination elsewhere.
     * @param root the rank that sends.
     */
    void broadcast(long[] data, int root);

    /**
     * Splits the communicator as {@code MPI_Comm_split} / {@code ncclCommSplit}: ranks that give the same
     * {@code color} form a new communicator, ordered by {@code key}, then by rank here. A collective call: every
     * rank must call it.
     *
     * @param color the group to join; a negative colour joins none.
     * @param key   the order within the group.
     * @return the new communicator, or null for a negative colour.
     * @throws HcclException when the exchange fails.
     */
    Communicator split(int color, int key);

    /**
     * Waits for the operations already issued, then releases the communicator's resources. Idempotent. Operations
     * issued after close fail with {@link IllegalStateException}.
     */
    @Override
    void close();
}
