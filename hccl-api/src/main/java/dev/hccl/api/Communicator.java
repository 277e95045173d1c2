package dev.hccl.api;

import dev.hccl.api.spi.TransportKind;

import java.nio.ByteBuffer;
import java.nio.file.Path;

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
 * {@link CommFuture#join()}. Point-to-point {@link #send}/{@link #recv} between two ranks match in issue order, per
 * direction. Point-to-point operations issued one after another run together, as in an NCCL group or with MPI's
 * {@code Isend}/{@code Irecv}: each may wait for another, so every rank may post its receive before its send (a
 * ring, a halo exchange) and then wait for both. A collective starts once the point-to-point operations issued before
 * it have completed; a send issued after a receive does not wait for it, so to pass on what a receive brought, wait
 * for the receive first.
 * <p>
 * <b>Threads.</b> As with NCCL, the order of issue must be the same on every rank, so several threads may use one
 * communicator only in an order they agree on: a thread issues after the other's call has returned. They may wait
 * for, and complete, each other's futures freely. A call issues from its entry until it returns: an asynchronous call
 * while it queues its operation, a blocking call until its operation completes. Two threads issuing at once
 * (collectives; or sends to, or receives from, the same peer) would have their order decided by a race, differently on
 * each rank, and equal-sized operations would mix their data: this is detected and fails the communicator on every
 * rank with {@link ErrorCode#E_CONCURRENT}, naming both threads. Detection is not prevention: the first pair of
 * calls may already have run on a rank before another rank detects the overlap and fails the job, so a result returned
 * on some rank just before the {@code E_CONCURRENT} failure may hold mixed data; discard every result of that step.
 * Sends and receives with different peers, or in
 * different directions, are numbered apart and may be issued from different threads at once. A race that never
 * overlaps two calls on any rank cannot be told from a program that issues different operations: it is caught only
 * when the operations differ (an {@link ErrorCode#E_MISMATCH}).
 * <p>
 * <b>Interrupts.</b> A blocking call is not interruptible, as {@code join()} is not: an operation abandoned half-way
 * would leave the other ranks without its data. An interrupt neither ends the wait nor is lost: the call completes,
 * and the thread's interrupt status is set when it returns (except where the native epoll transport is missing:
 * Netty's NIO selector clears an interrupt that wakes it, and the call then returns without it). A wait is bounded by {@code HCCL_EXEC_TIMEOUT}; a thread
 * that must not wait that long issues the asynchronous twin and waits with
 * {@link CommFuture#get(long, java.util.concurrent.TimeUnit)}.
 * <p>
 * <b>Errors.</b> Argument problems are raised by the calling method before anything goes on the wire, and leave the
 * communicator usable. Failures on the wire (a dead peer, a timeout, ranks issuing different collectives) fail the
 * communicator: the failed operation and every pending and later one complete with an {@link HcclException} that
 * names the rank and the operation. What a failed operation's output buffer holds is undefined.
 * <p>
 * <b>Arrays.</b> The collectives of Java arrays ({@code float[]}, {@code double[]}, {@code int[]}, {@code long[]})
 * are {@link HeapArrayCollectives}', which every communicator has.
 * <p>
 * <b>Objects and bytes.</b> Gathering and broadcasting byte arrays of any length and serializable values (metrics,
 * file names, configurations), as torch's {@code all_gather_object}, are {@link ObjectCollectives}'.
 */
public interface Communicator extends HeapArrayCollectives, ObjectCollectives, AutoCloseable
{
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
     * The transport this rank reaches a peer through, as the communicator chose it for the pair: the most preferred
     * one that can connect the two ranks ({@code shm} between ranks of one node, {@code tcp} otherwise, {@code inproc}
     * for ranks as threads).
     *
     * @param peer a rank of this communicator.
     * @return the transport's name, or {@code self} for this rank.
     * @throws IllegalArgumentException when {@code peer} is out of range.
     */
    String transportTo(int peer);

    /**
     * What the transport this rank reaches a peer through is ({@link #transportTo} names it): where its bytes travel
     * and what its links cost. Tools decide from it, not from the name.
     *
     * @param peer a rank of this communicator other than this one.
     * @return the transport's kind.
     * @throws IllegalArgumentException when {@code peer} is out of range or this rank.
     */
    TransportKind transportKindTo(int peer);

    /**
     * The transports this rank reaches its peers through.
     *
     * @return their names ({@link #transportTo}) joined by {@code +} in order of first use by rank, such as
     * {@code shm+tcp}; {@code none} for a communicator of one rank.
     */
    default String transports()
    {
        final java.util.Set<String> names = new java.util.LinkedHashSet<>();
        for (int peer = 0; peer < worldSize(); peer++)
        {
            if (peer != rank())
            {
                names.add(transportTo(peer));
            }
        }
        return names.isEmpty() ? "none" : String.join("+", names);
    }

    /**
     * A setting's value as this communicator's configuration resolves it: set on its {@link CommConfigBuilder}, else
     * the environment it was made with, else the default; a communicator split or shrunk from it shares it. For code
     * built on the communicator that owns settings of its own, as {@code GradientSync} reads {@code HCCL_AUTOTUNE}.
     *
     * @param setting the setting.
     * @param <T>     its type.
     * @return the value; null only for a setting whose default is none.
     * @throws IllegalArgumentException naming the variable when its text or value is invalid.
     */
    <T> T setting(Setting<T> setting);

    /**
     * Which algorithm this communicator runs for an operation of a given size, and why; the same answer on every
     * rank. {@code hccl-bench} prints it; DEBUG logging gives it once per operation and size class as it happens.
     *
     * @param operation a collective: all-reduce, all-gather, reduce-scatter, broadcast, reduce, all-to-all,
     *                  barrier, or a V collective, scatter or gather.
     * @param bytes     the size as nccl-tests reports it: the buffer for all-reduce, broadcast and reduce, the
     *                  whole output of all-gather, the whole input of reduce-scatter; not negative.
     * @return the choice, with each candidate's predicted time when the cost model made it.
     * @throws IllegalArgumentException for send, recv, split or init, or negative bytes.
     */
    AlgorithmChoice algorithmFor(Operation operation, long bytes);

    /**
     * What this rank of the communicator has done so far: calls, bytes and time per operation and size class, time
     * waiting for other ranks, a latency histogram, the latest call's bus bandwidth, stalls and the failure. Kept
     * always, allocation-free; the same figures are a JMX MBean ({@link CommMetrics}). Any thread may call it.
     *
     * @return the counters as they are now.
     */
    CommMetrics metrics();

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
     * Gathers a block of a different size from every rank into {@code recv} on every rank, as
     * {@code HcclAllGatherV} and {@code MPI_Allgatherv}: rank {@code j}'s {@code recvCounts[j]} elements land at
     * element {@code recvDispls[j]} of {@code recv}. Elements of {@code recv} outside every block are not written.
     * <p>
     * {@code recvCounts} and {@code recvDispls} must be the same on every rank (a rank whose {@code recvCounts}
     * disagree fails the operation as a mismatch). In place when {@code send} is this rank's block of {@code recv}
     * (MPI's {@code MPI_IN_PLACE}); {@code send} may also overlap {@code recv} anywhere else.
     *
     * @param send       this rank's contribution, {@code sendCount} elements.
     * @param sendCount  elements this rank contributes; must equal {@code recvCounts[rank()]}.
     * @param recv       the gathered blocks; must hold every block.
     * @param recvCounts elements from each rank, {@link #worldSize()} entries, none negative.
     * @param recvDispls where each rank's block starts in {@code recv}, in elements, {@link #worldSize()} entries,
     *                   none negative; the non-empty blocks must not overlap.
     * @param type       element type.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void allGatherV(
        ByteBuffer send, long sendCount, ByteBuffer recv, long[] recvCounts, long[] recvDispls, DataType type);

    /**
     * Asynchronous {@link #allGatherV}.
     *
     * @param send       this rank's contribution.
     * @param sendCount  elements this rank contributes.
     * @param recv       the gathered blocks.
     * @param recvCounts elements from each rank.
     * @param recvDispls where each rank's block starts in {@code recv}, in elements.
     * @param type       element type.
     * @return completes when {@code recv} holds every block.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture allGatherVAsync(
        ByteBuffer send, long sendCount, ByteBuffer recv, long[] recvCounts, long[] recvDispls, DataType type);

    /**
     * Reduces blocks of different sizes across ranks; rank {@code j} receives block {@code j} of the result, as
     * {@code HcclReduceScatterV} and {@code MPI_Reduce_scatter}: block {@code j} is the {@code sendCounts[j]}
     * elements from element {@code sendDispls[j]} of every rank's {@code send}.
     * <p>
     * {@code sendCounts} and {@code sendDispls} must be the same on every rank (a rank whose {@code sendCounts}
     * disagree fails the operation as a mismatch). {@code send} is not modified unless {@code recv} overlaps it;
     * {@code recv} may overlap {@code send} anywhere, in place when it is this rank's block of {@code send}.
     * {@link ReduceOp#AVG} divides by the world size, as {@link #reduceScatter} does.
     *
     * @param send       every block, this rank's contribution.
     * @param sendCounts elements of each block, {@link #worldSize()} entries, none negative.
     * @param sendDispls where each block starts in {@code send}, in elements, {@link #worldSize()} entries, none
     *                   negative.
     * @param recv       this rank's block of the result, {@code recvCount} elements.
     * @param recvCount  elements this rank receives; must equal {@code sendCounts[rank()]}.
     * @param type       element type.
     * @param op         reduction.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void reduceScatterV(
        ByteBuffer send, long[] sendCounts, long[] sendDispls, ByteBuffer recv, long recvCount, DataType type,
        ReduceOp op);

    /**
     * Asynchronous {@link #reduceScatterV}.
     *
     * @param send       every block, this rank's contribution.
     * @param sendCounts elements of each block.
     * @param sendDispls where each block starts in {@code send}, in elements.
     * @param recv       this rank's block of the result.
     * @param recvCount  elements this rank receives.
     * @param type       element type.
     * @param op         reduction.
     * @return completes when {@code recv} holds the result.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture reduceScatterVAsync(
        ByteBuffer send, long[] sendCounts, long[] sendDispls, ByteBuffer recv, long recvCount, DataType type,
        ReduceOp op);

    /**
     * Exchanges blocks of different sizes between every pair of ranks, as {@code HcclAlltoAllV} and
     * {@code MPI_Alltoallv}: the {@code sendCounts[j]} elements from element {@code sendDispls[j]} of {@code send}
     * go to rank {@code j}, which receives them as its {@code recvCounts[rank()]} elements at element
     * {@code recvDispls[rank()]} of its {@code recv}. So {@code sendCounts[j]} here must equal
     * {@code recvCounts[rank()]} on rank {@code j}; a pair that disagrees fails the operation. Elements of
     * {@code recv} outside every block are not written.
     * <p>
     * {@code recv} may overlap {@code send}, the same memory included: {@code send} is then copied first, and the
     * result is that of separate buffers.
     *
     * @param send       the blocks to send.
     * @param sendCounts elements to each rank, {@link #worldSize()} entries, none negative.
     * @param sendDispls where each outgoing block starts in {@code send}, in elements, none negative.
     * @param recv       the blocks received.
     * @param recvCounts elements from each rank, {@link #worldSize()} entries, none negative;
     *                   {@code recvCounts[rank()]} must equal {@code sendCounts[rank()]}.
     * @param recvDispls where each incoming block starts in {@code recv}, in elements, none negative; the non-empty
     *                   blocks must not overlap.
     * @param type       element type.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void allToAllV(
        ByteBuffer send, long[] sendCounts, long[] sendDispls, ByteBuffer recv, long[] recvCounts, long[] recvDispls,
        DataType type);

    /**
     * Asynchronous {@link #allToAllV}.
     *
     * @param send       the blocks to send.
     * @param sendCounts elements to each rank.
     * @param sendDispls where each outgoing block starts in {@code send}, in elements.
     * @param recv       the blocks received.
     * @param recvCounts elements from each rank.
     * @param recvDispls where each incoming block starts in {@code recv}, in elements.
     * @param type       element type.
     * @return completes when {@code recv} holds every block.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture allToAllVAsync(
        ByteBuffer send, long[] sendCounts, long[] sendDispls, ByteBuffer recv, long[] recvCounts, long[] recvDispls,
        DataType type);

    /**
     * Sends block {@code j} of the root's {@code send} to rank {@code j}, as {@code HcclScatter} and
     * {@code MPI_Scatter}: the root's {@code send} holds {@link #worldSize()} blocks of {@code recvCount} elements,
     * in rank order.
     * <p>
     * At the root, in place when {@code recv} is the root's block of {@code send} (MPI's {@code MPI_IN_PLACE});
     * {@code recv} may also overlap {@code send} anywhere else.
     *
     * @param send      the blocks, {@code worldSize() * recvCount} elements; used at the root only (may be null
     *                  elsewhere).
     * @param recv      this rank's block, {@code recvCount} elements.
     * @param recvCount elements per rank.
     * @param type      element type.
     * @param root      the rank that sends.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void scatter(ByteBuffer send, ByteBuffer recv, long recvCount, DataType type, int root);

    /**
     * Asynchronous {@link #scatter}.
     *
     * @param send      the blocks, at the root.
     * @param recv      this rank's block.
     * @param recvCount elements per rank.
     * @param type      element type.
     * @param root      the rank that sends.
     * @return completes when {@code recv} holds this rank's block and, at the root, {@code send} may be reused.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture scatterAsync(ByteBuffer send, ByteBuffer recv, long recvCount, DataType type, int root);

    /**
     * Gathers {@code sendCount} elements from every rank into the root's {@code recv}, in rank order, as
     * {@code MPI_Gather} (HCCL has no gather; its users call all-gather).
     * <p>
     * At the root, in place when {@code send} is the root's block of {@code recv} (MPI's {@code MPI_IN_PLACE});
     * {@code send} may also overlap {@code recv} anywhere else.
     *
     * @param send      this rank's contribution, {@code sendCount} elements.
     * @param recv      {@code worldSize() * sendCount} elements at the root; used at the root only (may be null
     *                  elsewhere).
     * @param sendCount elements per rank.
     * @param type      element type.
     * @param root      the rank that receives.
     * @throws IllegalArgumentException on bad arguments.
     * @throws HcclException            when the operation fails.
     */
    void gather(ByteBuffer send, ByteBuffer recv, long sendCount, DataType type, int root);

    /**
     * Asynchronous {@link #gather}.
     *
     * @param send      this rank's contribution.
     * @param recv      the gathered blocks, at the root.
     * @param sendCount elements per rank.
     * @param type      element type.
     * @param root      the rank that receives.
     * @return completes when the operation is done on this rank.
     * @throws IllegalArgumentException on bad arguments.
     */
    CommFuture gatherAsync(ByteBuffer send, ByteBuffer recv, long sendCount, DataType type, int root);

    /**
     * Sends {@code count} elements to {@code peer}, which must issue a matching {@link #recv}. As in MPI and NCCL, a
     * send may not complete before the receive is posted: what fits in the peer's {@code HCCL_EAGER_BUDGET} goes at
     * once, the rest waits for the receive, so a program must not wait for a send before its receive can be issued.
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
     * Allocates a registered buffer, as NCCL's {@code ncclMemAlloc} with a window registered on the communicator: a
     * direct buffer in native byte order, of {@code bytes} zeros, that the other ranks of this rank's node map too, so
     * that a collective within the node reads it where it lies instead of copying it into the node arena (the arena's
     * all-reduce, reduce, reduce-scatter, all-gather and broadcast, from 64 KiB). Any slice of it counts. A collective
     * call: every rank calls it with the same size, in the same order as its other collectives; it is one of them.
     * <p>
     * Where there is no node arena (a communicator split from another, TCP only, {@code HCCL_SHM_ARENA_SIZE=0}, a
     * rank alone on its node), or a rank cannot make or map the memory (it logs a WARN that says why), every rank
     * gets an ordinary direct buffer, with which the collectives work alike, copying. The memory is freed once the
     * buffer is unreachable and the communicator is closed: allocate once and reuse, as a training loop's buckets are.
     *
     * @param bytes the size, more than 0.
     * @return the buffer, with position 0 and limit {@code bytes}.
     * @throws IllegalArgumentException when {@code bytes} is not positive (on this rank, before any exchange).
     * @throws HcclException            {@link ErrorCode#E_PARA} on every rank when the ranks asked for different sizes;
     *                                  or when the exchange fails.
     */
    ByteBuffer allocateRegistered(int bytes);

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
     * Writes this rank's flight recorder now: the last {@code HCCL_TRACE_BUFFER_SIZE} operations (kind, sequence
     * number, sizes, type, algorithm, peer, state, times) and where the rank waits, as JSON, for {@code hccl-trace},
     * which reads every rank's dump and says what went wrong. Also written on failure when {@code HCCL_DUMP_DIR} is
     * set, and when a file {@code hccl-dump-now} in it is touched.
     *
     * @return the file: {@code hccl-trace-<communicator id>-r<rank>.json} in {@code HCCL_DUMP_DIR}, or, when unset, in
     *         this user's private {@code hccl-dumps-<user>} under the temporary directory (made {@code rwx------}).
     * @throws java.io.UncheckedIOException when the dump cannot be written, or when unset and
     *                                      {@code hccl-dumps-<user>} is a link, another user's, or writable by others:
     *                                      the message names it, its owner and {@code HCCL_DUMP_DIR}.
     */
    Path dumpTrace();

    /**
     * Aborts the communicator, as {@code ncclCommAbort}: from any thread, ends at once every wait on it, here (the
     * operations fail with {@link ErrorCode#E_UNAVAIL}) and on every peer (theirs fail with {@link ErrorCode#E_REMOTE}
     * naming this rank). Later operations fail too; {@link #close()} still releases the resources. Communicators
     * split from this one are not aborted. Idempotent.
     */
    void abort();

    /**
     * The ranks this rank has lost: their connection failed without a goodbye (the process died, its host is
     * unreachable, or it was silent past {@code HCCL_HEARTBEAT_TIMEOUT}). What survivors pass to {@link #shrink}.
     *
     * @return ranks of this communicator, in increasing order; empty when none is lost.
     */
    int[] lostRanks();

    /**
     * A communicator of this one's ranks but {@code excludedRanks}, as {@code ncclCommShrink}: after a rank dies,
     * the survivors carry on without it. Works on a failed communicator as on a healthy one. A collective call of the
     * survivors: each must call it, with the same list (typically {@link #lostRanks()}), as many times; ranks keep
     * their order and are numbered from 0. This communicator is left as it is (close it too).
     *
     * @param excludedRanks ranks of this communicator to leave out; not this rank.
     * @return the new communicator.
     * @throws IllegalArgumentException when a rank is out of range, repeated, or this rank.
     */
    Communicator shrink(int... excludedRanks);

    /**
     * Waits for the operations already issued, confirms with the peers that every rank issued the same collectives
     * (waiting up to {@code HCCL_CONNECT_TIMEOUT} for them to close too), then releases the communicator's
     * resources. Idempotent. Operations issued after close fail with {@link IllegalStateException}.
     *
     * @throws HcclException {@link ErrorCode#E_MISMATCH} when the ranks' collectives differed (a broadcast whose ranks
     *                       disagreed on the root, as the last operation, say), or the communicator's failure when it
     *                       failed after its last operation; the resources are released all the same.
     */
    @Override
    void close();
}
