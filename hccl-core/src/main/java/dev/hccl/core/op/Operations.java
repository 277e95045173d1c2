package dev.hccl.core.op;

import dev.hccl.algorithms.RingAlgorithm;
import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.CommFuture;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * What each of a communicator's operations does: checks its arguments on the caller's thread, builds its fingerprint,
 * and issues it with the body that runs its algorithm (chosen by the {@link AlgorithmSelector} for its size). The
 * communicator's public methods, blocking and not, come here; {@link OpIssuer} numbers and places what this builds.
 */
public final class Operations
{
    private final OpScope comm;
    private final OpIssuer issuer;
    private final AlgorithmSelector algorithms;
    private final int rank;
    private final RingAlgorithm splitExchange = new RingAlgorithm();
    /** Guarded by the collective lane, which a split holds. */
    private int splits;

    /**
     * @param comm       the communicator as its operations see it.
     * @param issuer     numbers and places what this builds.
     * @param algorithms chooses each collective's algorithm.
     */
    public Operations(final OpScope comm, final OpIssuer issuer, final AlgorithmSelector algorithms)
    {
        this.comm = comm;
        this.issuer = issuer;
        this.algorithms = algorithms;
        this.rank = comm.rank();
    }

    CommFuture allReduce(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("count", count, type, 1);
        Checks.reduceOp(op, type);
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final Reducer reducer = Reducers.of(type, op);
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_REDUCE, type, op, OpDescriptor.NO_ROOT, count);
        return issuer.collective(blocking, desc, ctx ->
        {
            final AllReduceAlgorithm algorithm = algorithms.allReduce(ctx, bytes, type);
            final ByteBuffer input = dividesInputs(type, op) ? dividedInput(in, bytes, type) : inputFor(in, out, bytes);
            algorithm.allReduce(ctx, input, out, (int)count, type, reducer);
            averageResult(out, count, type, op);
        });
    }

    CommFuture allGather(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type, final boolean blocking)
    {
        final int bytes = Checks.bytes("sendCount", sendCount, type, 1);
        Checks.bytes("sendCount", sendCount, type, comm.worldSize());
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes * comm.worldSize(), type, true);
        final boolean inPlace = Checks.isBlock(in, out, rank, bytes);
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_GATHER, type, null, OpDescriptor.NO_ROOT, sendCount);
        return issuer.collective(blocking, desc, ctx ->
            algorithms.allGather(ctx, (long)bytes * comm.worldSize())
                .allGather(ctx, inPlace ? in : inputFor(in, out, bytes), out, (int)sendCount, type));
    }

    CommFuture reduceScatter(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final ReduceOp op,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("recvCount", recvCount, type, 1);
        final int sendBytes = Checks.bytes("recvCount", recvCount, type, comm.worldSize());
        Checks.reduceOp(op, type);
        final ByteBuffer in = Checks.region("send", send, sendBytes, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final Reducer reducer = Reducers.of(type, op);
        final OpDescriptor desc = new OpDescriptor(Operation.REDUCE_SCATTER, type, op, OpDescriptor.NO_ROOT, recvCount);
        return issuer.collective(blocking, desc, ctx ->
        {
            // The ring reduces in scratch and writes recv last, so recv may overlap send.
            algorithms.reduceScatter(ctx, (long)bytes * comm.worldSize(), type)
                .reduceScatter(ctx, dividesInputs(type, op) ? dividedInput(in, sendBytes, type) : in, out,
                    (int)recvCount, type, reducer);
            averageResult(out, recvCount, type, op);
        });
    }

    CommFuture broadcast(
        final ByteBuffer buf, final long count, final DataType type, final int root,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("count", count, type, 1);
        Checks.rank("root", root, comm.worldSize());
        final ByteBuffer data = Checks.region("buf", buf, bytes, type, rank != root);
        return issuer.collective(blocking, new OpDescriptor(Operation.BROADCAST, type, null, root, count), ctx ->
            algorithms.broadcast(ctx, bytes).broadcast(ctx, data, (int)count, type, root));
    }

    CommFuture reduce(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op,
        final int root, final boolean blocking)
    {
        final int bytes = Checks.bytes("count", count, type, 1);
        Checks.reduceOp(op, type);
        Checks.rank("root", root, comm.worldSize());
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = rank == root ? Checks.region("recv", recv, bytes, type, true) : null;
        final Reducer reducer = Reducers.of(type, op);
        return issuer.collective(blocking, new OpDescriptor(Operation.REDUCE, type, op, root, count), ctx ->
        {
            final ByteBuffer input = dividesInputs(type, op) ? dividedInput(in, bytes, type) :
                out == null ? in : inputFor(in, out, bytes);
            algorithms.reduce(ctx, bytes, type).reduce(ctx, input, out, (int)count, type, reducer, root);
            if (out != null)
            {
                averageResult(out, count, type, op);
            }
        });
    }

    CommFuture allToAll(
        final ByteBuffer send, final ByteBuffer recv, final long countPerRank, final DataType type,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("countPerRank", countPerRank, type, comm.worldSize());
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_TO_ALL, type, null, OpDescriptor.NO_ROOT, countPerRank);
        return issuer.collective(blocking, desc, ctx ->
        {
            // Blocks land in recv while send is still being read: overlapping memory needs its own copy first.
            final ByteBuffer source = Checks.overlap(in, out) ? stage(in, bytes) : in;
            algorithms.allToAll(ctx, bytes).allToAll(ctx, source, out, (int)countPerRank, type);
        });
    }

    CommFuture send(
        final ByteBuffer buf, final long count, final DataType type, final int peer, final boolean blocking)
    {
        return pointToPoint(true, buf, count, type, peer, blocking);
    }

    CommFuture recv(
        final ByteBuffer buf, final long count, final DataType type, final int peer, final boolean blocking)
    {
        return pointToPoint(false, buf, count, type, peer, blocking);
    }

    /**
     * A send or a receive: the payload in segments, each a message of its own, matched in issue order per peer.
     */
    CommFuture pointToPoint(
        final boolean send,
        final ByteBuffer buf,
        final long count,
        final DataType type,
        final int peer,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("count", count, type, 1);
        checkPeer(peer);
        final ByteBuffer data = Checks.region("buf", buf, bytes, type, !send);
        final OpDescriptor desc = new OpDescriptor(send ? Operation.SEND : Operation.RECV, type, null, peer, count);
        return issuer.pointToPoint(blocking, desc, peer, send, ctx ->
        {
            final Request[] transfers = new Request[segments(bytes)];
            for (int k = 0; k < transfers.length; k++)
            {
                final long tag = Tags.of(Tags.P2P_PHASE, 0, k);
                final int offset = k * comm.segmentBytes();
                final int length = Math.min(comm.segmentBytes(), bytes - offset);
                transfers[k] = send ? ctx.send(peer, tag, data, offset, length) :
                    ctx.recv(peer, tag, data, offset, length);
            }
            return transfers;
        });
    }

    /**
     * Messages of a point-to-point transfer: at least one, so that a zero-length send still matches its receive.
     */
    private int segments(final int bytes)
    {
        return Math.max(1, (int)(((long)bytes + comm.segmentBytes() - 1) / comm.segmentBytes()));
    }

    CommFuture barrier(final boolean blocking)
    {
        return issuer.collective(blocking, new OpDescriptor(Operation.BARRIER, null, null, OpDescriptor.NO_ROOT, 0),
            ctx -> algorithms.barrier(ctx).barrier(ctx));
    }

    /**
     * In place (MPI_IN_PLACE) when {@code send} is this rank's block of {@code recv}; the algorithm reads
     * {@code send} before it writes {@code recv}, so any other overlap is fine too. The fingerprint's count is the
     * total of {@code recvCounts}, the same on every rank that passes the same counts.
     */
    CommFuture allGatherV(
        final ByteBuffer send, final long sendCount, final ByteBuffer recv, final long[] recvCounts,
        final long[] recvDispls, final DataType type, final boolean blocking)
    {
        final int bytes = Checks.bytes("sendCount", sendCount, type, 1);
        final int n = comm.worldSize();
        final int[] counts = Checks.perRank("recvCounts", recvCounts, n);
        final int[] displs = Checks.perRank("recvDispls", recvDispls, n);
        Checks.ownCount("sendCount", sendCount, "recvCounts", counts, rank);
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final int extent = Checks.blocks("recv", recv, "recvCounts", counts, "recvDispls", displs, type);
        final ByteBuffer out = Checks.region("recv", recv, extent, type, true);
        Checks.disjoint("recvDispls", counts, displs);
        final long total = Checks.total("recvCounts", counts, type);
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_GATHER_V, type, null, OpDescriptor.NO_ROOT, total);
        return issuer.collective(blocking, desc, ctx ->
            algorithms.allGatherV(ctx, total * type.size()).allGatherV(ctx, in, out, counts, displs, type));
    }

    /**
     * The ring reduces in scratch and writes {@code recv} last, so {@code recv} may overlap {@code send} anywhere:
     * in place (MPI_IN_PLACE) when it is this rank's block of {@code send}. Input blocks may overlap each other. The
     * fingerprint's count is the total of {@code sendCounts}.
     */
    CommFuture reduceScatterV(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long recvCount, final DataType type, final ReduceOp op, final boolean blocking)
    {
        final int bytes = Checks.bytes("recvCount", recvCount, type, 1);
        Checks.reduceOp(op, type);
        final int n = comm.worldSize();
        final int[] counts = Checks.perRank("sendCounts", sendCounts, n);
        final int[] displs = Checks.perRank("sendDispls", sendDispls, n);
        Checks.ownCount("recvCount", recvCount, "sendCounts", counts, rank);
        final int extent = Checks.blocks("send", send, "sendCounts", counts, "sendDispls", displs, type);
        final ByteBuffer in = Checks.region("send", send, extent, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final long total = Checks.total("sendCounts", counts, type);
        final Reducer reducer = Reducers.of(type, op);
        final OpDescriptor desc = new OpDescriptor(Operation.REDUCE_SCATTER_V, type, op, OpDescriptor.NO_ROOT, total);
        return issuer.collective(blocking, desc, ctx ->
        {
            algorithms.reduceScatterV(ctx, total * type.size(), type)
                .reduceScatterV(ctx, dividesInputs(type, op) ? dividedInput(in, extent, type) : in, counts, displs,
                    out, type, reducer);
            averageResult(out, recvCount, type, op);
        });
    }

    /**
     * Not in place: {@code send} overlapping {@code recv} is copied first (MPI_IN_PLACE, which takes the send layout
     * from the receive one, is the case of the same memory with the same counts and displacements). No count is the
     * same on every rank here, so the fingerprint's count is 0; each pair's block size is checked by the length of
     * its messages instead.
     */
    CommFuture allToAllV(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long[] recvCounts, final long[] recvDispls, final DataType type, final boolean blocking)
    {
        Checks.notNull(type, "type");
        final int n = comm.worldSize();
        final int[] sCounts = Checks.perRank("sendCounts", sendCounts, n);
        final int[] sDispls = Checks.perRank("sendDispls", sendDispls, n);
        final int[] rCounts = Checks.perRank("recvCounts", recvCounts, n);
        final int[] rDispls = Checks.perRank("recvDispls", recvDispls, n);
        Checks.ownCount("recvCounts[" + rank + "]", rCounts[rank], "sendCounts", sCounts, rank);
        final int sendExtent = Checks.blocks("send", send, "sendCounts", sCounts, "sendDispls", sDispls, type);
        final ByteBuffer in = Checks.region("send", send, sendExtent, type, false);
        final int recvExtent = Checks.blocks("recv", recv, "recvCounts", rCounts, "recvDispls", rDispls, type);
        final ByteBuffer out = Checks.region("recv", recv, recvExtent, type, true);
        Checks.disjoint("recvDispls", rCounts, rDispls);
        final long sent = Checks.total("sendCounts", sCounts, type);
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_TO_ALL_V, type, null, OpDescriptor.NO_ROOT, 0);
        return issuer.collective(blocking, desc, ctx ->
        {
            // Blocks land in recv while send is still being read: overlapping memory needs its own copy first.
            final ByteBuffer source = Checks.overlap(in, out) ? stage(in, sendExtent) : in;
            algorithms.allToAllV(ctx, sent * type.size())
                .allToAllV(ctx, source, sCounts, sDispls, out, rCounts, rDispls, type);
        });
    }

    /**
     * At the root, in place (MPI_IN_PLACE) when {@code recv} is its block of {@code send}; the algorithm writes
     * {@code recv} last, so any other overlap is fine too.
     */
    CommFuture scatter(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final int root,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("recvCount", recvCount, type, 1);
        final int n = comm.worldSize();
        final int sendBytes = Checks.bytes("recvCount", recvCount, type, n);
        Checks.rank("root", root, n);
        final ByteBuffer in = rank == root ? Checks.region("send", send, sendBytes, type, false) : null;
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final OpDescriptor desc = new OpDescriptor(Operation.SCATTER, type, null, root, recvCount);
        return issuer.collective(blocking, desc, ctx ->
            algorithms.scatter(ctx, sendBytes).scatter(ctx, in, out, (int)recvCount, type, root));
    }

    /**
     * At the root, in place (MPI_IN_PLACE) when {@code send} is its block of {@code recv}; the algorithm reads
     * {@code send} before it writes {@code recv}, so any other overlap is fine too.
     */
    CommFuture gather(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type, final int root,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("sendCount", sendCount, type, 1);
        final int n = comm.worldSize();
        final int recvBytes = Checks.bytes("sendCount", sendCount, type, n);
        Checks.rank("root", root, n);
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = rank == root ? Checks.region("recv", recv, recvBytes, type, true) : null;
        final OpDescriptor desc = new OpDescriptor(Operation.GATHER, type, null, root, sendCount);
        return issuer.collective(blocking, desc, ctx ->
            algorithms.gather(ctx, recvBytes).gather(ctx, in, out, (int)sendCount, type, root));
    }

    private void checkPeer(final int peer)
    {
        Checks.rank("peer", peer, comm.worldSize());
        if (peer == rank)
        {
            throw new IllegalArgumentException("peer must be another rank, got this rank (" + rank + ")");
        }
    }

    /**
     * The input of an operation that writes {@code out} while it still reads {@code in}: {@code out} itself when they
     * are the same memory (in place), {@code in} when they do not touch, else a private copy of {@code in}.
     */
    private ByteBuffer inputFor(final ByteBuffer in, final ByteBuffer out, final int bytes)
    {
        if (Checks.sameStart(in, out))
        {
            return out;
        }
        return Checks.overlap(in, out) ? stage(in, bytes) : in;
    }

    /**
     * Whether AVG divides each rank's input by the world size before the sum, as NCCL does for every floating type,
     * rather than the sum after it: for FP8, whose sum of n inputs would saturate at 448 (E4M3) long before their
     * average does. The other types keep the one division of the result, which rounds once.
     */
    private static boolean dividesInputs(final DataType type, final ReduceOp op)
    {
        return op == ReduceOp.AVG && (type == DataType.FP8_E4M3 || type == DataType.FP8_E5M2);
    }

    /**
     * Finishes AVG where the inputs were summed undivided ({@link #dividesInputs}): the result divided by the world
     * size, in place. Does nothing for another operator.
     */
    private void averageResult(final ByteBuffer out, final long count, final DataType type, final ReduceOp op)
    {
        if (op == ReduceOp.AVG && !dividesInputs(type, op))
        {
            Reducers.divide(out, 0, (int)count, type, comm.worldSize());
        }
    }

    /** The first {@code bytes} of {@code in} divided by the world size, in staging memory; {@code in} stays. */
    private ByteBuffer dividedInput(final ByteBuffer in, final int bytes, final DataType type)
    {
        final ByteBuffer divided = stage(in, bytes);
        Reducers.divide(divided, 0, bytes / type.size(), type, comm.worldSize());
        return divided;
    }

    private ByteBuffer stage(final ByteBuffer in, final int bytes)
    {
        final ByteBuffer copy = comm.scratch(OpScope.STAGING_SLOT, bytes);
        Copies.copy(copy, 0, in, 0, bytes);
        return copy;
    }

    /**
     * What a split's exchange gathered.
     *
     * @param colorsAndKeys every rank's color and key, two native-order ints each, by rank.
     * @param index         which split of this communicator it was, the same on every rank.
     */
    public record SplitExchange(ByteBuffer colorsAndKeys, int index)
    {
    }

    /**
     * A split's collective (NCCL's {@code ncclCommSplit}): an all-gather of every rank's color and key, numbered as
     * the communicator's collectives are, and the split's index, which pairs up alike on every rank with the
     * sequence number.
     *
     * @param color this rank's group.
     * @param key   this rank's order within it.
     * @return every rank's color and key, and the index.
     */
    public SplitExchange splitExchange(final int color, final int key)
    {
        final int n = comm.worldSize();
        final ByteBuffer mine = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        mine.putInt(0, color).putInt(4, key);
        final ByteBuffer all = ByteBuffer.allocateDirect(8 * n).order(ByteOrder.nativeOrder());
        final OpDescriptor desc = new OpDescriptor(Operation.SPLIT, DataType.INT32, null, OpDescriptor.NO_ROOT, 2);
        issuer.enter(IssueGuard.COLLECTIVES, desc); // the index and the sequence number pair up alike on every rank
        try
        {
            final int index = splits++;
            issuer.collective(true, desc, ctx -> splitExchange.allGather(ctx, mine, all, 2, DataType.INT32));
            return new SplitExchange(all, index);
        }
        finally
        {
            issuer.exit(IssueGuard.COLLECTIVES);
        }
    }
}
