package dev.hccl.core;

import dev.hccl.algorithms.ClusterShape;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.algorithms.RingAlgorithm;
import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.AlgorithmChoice;
import dev.hccl.api.CommConfig;
import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.TopoProbe;
import dev.hccl.api.Topology;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.BackoffWait;
import dev.hccl.api.spi.Link;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import dev.hccl.api.spi.WaitPolicy;
import dev.hccl.core.mailbox.FaultListener;
import dev.hccl.core.mailbox.Mailbox;
import dev.hccl.core.topology.LinkProbe;
import dev.hccl.core.topology.StaticTopology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The communicator: checks arguments on the caller's thread, numbers each operation, and runs it on its execution
 * stream against the point-to-point primitives of {@link OpContext}. A failure on the wire fails the communicator:
 * the operation, every queued one and every later one complete with an {@link HcclException}, and the peers are told.
 */
final class CommunicatorImpl implements Communicator, FaultListener
{
    private static final Logger LOG = LoggerFactory.getLogger(CommunicatorImpl.class);
    private static final long CLOSE_WAIT_SLACK_MILLIS = 5_000;
    private static final int STAGING_SLOT = 3;

    private final CommConfig config;
    private final Fabric fabric;
    private final long commId;
    private final int rank;
    private final int[] globalRanks;
    private final int[] localOfGlobal;
    private final StaticTopology topology;
    private final int localRank;
    private final int localSize;
    private final WaitPolicy waitPolicy;
    private final Mailbox mailbox;
    private final ExecutionStream stream;
    private final long execTimeoutNanos;

    private final AlgorithmSelector algorithms;
    /** The exchange of (color, key) in split(): fixed, whatever HCCL_ALGO says. */
    private final RingAlgorithm splitExchange = new RingAlgorithm();

    private final Object issueLock = new Object();
    private final IssueGuard issueGuard;
    /** Touched only by whoever runs the stream's operations (its thread or a claimant), one at a time. */
    private final PostedPointToPoint postedPointToPoint = new PostedPointToPoint();
    private long nextSeq;
    private int splits;
    private final long[] p2pSendSeq;
    private final long[] p2pRecvSeq;
    private boolean closed;
    private volatile HcclException failure;
    /** Open until the peers have been told of this communicator's failure; close() waits for it. */
    private final CountDownLatch peersTold = new CountDownLatch(1);
    /** The operation the stream runs, for naming it in faults that come from transport threads; null when idle. */
    private volatile RunningOp running;
    /** Slots 0 to 2 belong to algorithms ({@link dev.hccl.api.spi.PeerGroup#scratch}); slot 3 to staging here. */
    private final ByteBuffer[] scratch = new ByteBuffer[4];

    CommunicatorImpl(
        final CommConfig config,
        final Fabric fabric,
        final long commId,
        final int rank,
        final int[] globalRanks,
        final StaticTopology topology)
    {
        this.config = config;
        this.fabric = fabric;
        this.commId = commId;
        this.rank = rank;
        this.globalRanks = globalRanks.clone();
        this.topology = topology;
        this.localRank = config.localRank() != CommConfig.DERIVE && isRoot() ? config.localRank() :
            topology.localRank(rank);
        this.localSize = config.localSize() != CommConfig.DERIVE && isRoot() ? config.localSize() :
            topology.ranksOnNode(topology.nodeOf(rank)).size();
        this.execTimeoutNanos = config.execTimeout().toNanos();
        this.algorithms = new AlgorithmSelector(AlgoOverride.parse(config.algo(), AlgorithmSelector.CATALOG),
            shapeOf(topology), config.deterministic(), fabric.defaultCosts());
        if (rank == 0 && LOG.isInfoEnabled())
        {
            LOG.info("rank 0: {}", algorithms);
        }
        final StaticTopology root = fabric.topology();
        final int processesHere = root.ranksOnNode(root.nodeOf(globalRanks[rank])).size();
        this.waitPolicy = BackoffWait.forNode(processesHere, Runtime.getRuntime().availableProcessors());
        this.issueGuard = new IssueGuard(globalRanks.length);
        this.p2pSendSeq = new long[globalRanks.length];
        this.p2pRecvSeq = new long[globalRanks.length];
        int maxGlobal = 0;
        for (final int g : globalRanks)
        {
            maxGlobal = Math.max(maxGlobal, g);
        }
        localOfGlobal = new int[maxGlobal + 1];
        Arrays.fill(localOfGlobal, -1);
        for (int i = 0; i < globalRanks.length; i++)
        {
            localOfGlobal[globalRanks[i]] = i;
        }
        this.mailbox = fabric.dispatcher().mailbox(commId);
        this.stream = new ExecutionStream("hccl-stream-r" + rank + "-" + Long.toHexString(commId & 0xFFFF));
        mailbox.attach(globalRanks, this);
    }

    /**
     * Measures the links for the cost model when {@code HCCL_TOPO_PROBE} asks ({@code auto}: when the communicator
     * spans more than one node), unless deterministic. Every rank calls it before the communicator is handed out.
     */
    void probeLinks()
    {
        final TopoProbe probe = config.topoProbe();
        if (probe == TopoProbe.OFF || (probe == TopoProbe.AUTO && topology.nodeCount() == 1))
        {
            return;
        }
        if (config.deterministic())
        {
            if (rank == 0)
            {
                LOG.info("rank 0: {} ignored under {}: the cost model keeps its defaults",
                    CommConfig.TOPO_PROBE, CommConfig.DETERMINISTIC);
            }
            return;
        }
        final long start = System.nanoTime();
        final LinkCosts measured = LinkProbe.measure(this, algorithms.linkCosts());
        algorithms.linkCosts(measured);
        if (rank == 0)
        {
            LOG.info("rank 0: links probed in {} ms: {}", (System.nanoTime() - start) / 1_000_000, measured);
        }
    }

    /** The layout the cost model sees: each rank's node. */
    private static ClusterShape shapeOf(final Topology topology)
    {
        final int[] nodeOfRank = new int[topology.worldSize()];
        for (int r = 0; r < nodeOfRank.length; r++)
        {
            nodeOfRank[r] = topology.nodeOf(r);
        }
        return ClusterShape.of(nodeOfRank);
    }

    private boolean isRoot()
    {
        return fabric.topology() == topology;
    }

    @Override
    public int rank()
    {
        return rank;
    }

    @Override
    public int worldSize()
    {
        return globalRanks.length;
    }

    @Override
    public int localRank()
    {
        return localRank;
    }

    @Override
    public int localSize()
    {
        return localSize;
    }

    @Override
    public AlgorithmChoice algorithmFor(final Operation operation, final long bytes)
    {
        return algorithms.choice(operation, bytes);
    }

    @Override
    public Topology topology()
    {
        return topology;
    }

    @Override
    public String transportTo(final int peer)
    {
        if (peer < 0 || peer >= globalRanks.length)
        {
            throw new IllegalArgumentException(
                "peer: must be in [0, " + globalRanks.length + "), got " + peer + " (rank " + rank + ")");
        }
        return peer == rank ? "self" : fabric.transportTo(globalRanks[peer]);
    }

    long commId()
    {
        return commId;
    }

    Mailbox mailbox()
    {
        return mailbox;
    }

    int globalRank(final int peer)
    {
        return globalRanks[peer];
    }

    Link link(final int peer)
    {
        return fabric.link(globalRanks[peer]);
    }

    long execTimeoutNanos()
    {
        return execTimeoutNanos;
    }

    int segmentBytes()
    {
        return config.segmentBytes();
    }

    ByteBuffer scratch(final int slot, final int bytes)
    {
        ByteBuffer buffer = scratch[slot];
        if (buffer == null || buffer.capacity() < bytes)
        {
            final int capacity = (int)Math.min(Integer.MAX_VALUE - 8, Math.max(bytes, buffer == null ? 0 :
                2L * buffer.capacity()));
            buffer = ByteBuffer.allocateDirect(capacity).order(ByteOrder.nativeOrder());
            scratch[slot] = buffer;
        }
        return buffer;
    }

    // ---------------------------------------------------------------- collectives

    @Override
    public void allReduce(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op)
    {
        allReduce(send, recv, count, type, op, true).join();
    }

    @Override
    public CommFuture allReduceAsync(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op)
    {
        return allReduce(send, recv, count, type, op, false);
    }

    private CommFuture allReduce(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("count", count, type, 1);
        Checks.reduceOp(op, type);
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final Reducer reducer = Reducers.of(type, op);
        return submit(blocking, new OpDescriptor(Operation.ALL_REDUCE, type, op, OpDescriptor.NO_ROOT, count), ctx ->
        {
            final AllReduceAlgorithm algorithm = algorithms.allReduce(bytes);
            algorithm.allReduce(ctx, inputFor(in, out, bytes), out, (int)count, type, reducer);
            if (op == ReduceOp.AVG)
            {
                Reducers.divide(out, 0, (int)count, type, worldSize());
            }
        });
    }

    @Override
    public void allGather(final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type)
    {
        allGather(send, recv, sendCount, type, true).join();
    }

    @Override
    public CommFuture allGatherAsync(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type)
    {
        return allGather(send, recv, sendCount, type, false);
    }

    private CommFuture allGather(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type, final boolean blocking)
    {
        final int bytes = Checks.bytes("sendCount", sendCount, type, 1);
        Checks.bytes("sendCount", sendCount, type, worldSize());
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes * worldSize(), type, true);
        final boolean inPlace = Checks.isBlock(in, out, rank, bytes);
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_GATHER, type, null, OpDescriptor.NO_ROOT, sendCount);
        return submit(blocking, desc, ctx ->
            algorithms.allGather((long)bytes * worldSize())
                .allGather(ctx, inPlace ? in : inputFor(in, out, bytes), out, (int)sendCount, type));
    }

    @Override
    public void reduceScatter(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final ReduceOp op)
    {
        reduceScatter(send, recv, recvCount, type, op, true).join();
    }

    @Override
    public CommFuture reduceScatterAsync(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final ReduceOp op)
    {
        return reduceScatter(send, recv, recvCount, type, op, false);
    }

    private CommFuture reduceScatter(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final ReduceOp op,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("recvCount", recvCount, type, 1);
        final int sendBytes = Checks.bytes("recvCount", recvCount, type, worldSize());
        Checks.reduceOp(op, type);
        final ByteBuffer in = Checks.region("send", send, sendBytes, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final Reducer reducer = Reducers.of(type, op);
        final OpDescriptor desc = new OpDescriptor(Operation.REDUCE_SCATTER, type, op, OpDescriptor.NO_ROOT, recvCount);
        return submit(blocking, desc, ctx ->
        {
            // The ring reduces in scratch and writes recv last, so recv may overlap send.
            algorithms.reduceScatter((long)bytes * worldSize())
                .reduceScatter(ctx, in, out, (int)recvCount, type, reducer);
            if (op == ReduceOp.AVG)
            {
                Reducers.divide(out, 0, (int)recvCount, type, worldSize());
            }
        });
    }

    @Override
    public void broadcast(final ByteBuffer buf, final long count, final DataType type, final int root)
    {
        broadcast(buf, count, type, root, true).join();
    }

    @Override
    public CommFuture broadcastAsync(final ByteBuffer buf, final long count, final DataType type, final int root)
    {
        return broadcast(buf, count, type, root, false);
    }

    private CommFuture broadcast(
        final ByteBuffer buf, final long count, final DataType type, final int root,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("count", count, type, 1);
        Checks.rank("root", root, worldSize());
        final ByteBuffer data = Checks.region("buf", buf, bytes, type, rank != root);
        return submit(blocking, new OpDescriptor(Operation.BROADCAST, type, null, root, count), ctx ->
            algorithms.broadcast(bytes).broadcast(ctx, data, (int)count, type, root));
    }

    @Override
    public void reduce(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op,
        final int root)
    {
        reduce(send, recv, count, type, op, root, true).join();
    }

    @Override
    public CommFuture reduceAsync(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op,
        final int root)
    {
        return reduce(send, recv, count, type, op, root, false);
    }

    private CommFuture reduce(
        final ByteBuffer send, final ByteBuffer recv, final long count, final DataType type, final ReduceOp op,
        final int root, final boolean blocking)
    {
        final int bytes = Checks.bytes("count", count, type, 1);
        Checks.reduceOp(op, type);
        Checks.rank("root", root, worldSize());
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = rank == root ? Checks.region("recv", recv, bytes, type, true) : null;
        final Reducer reducer = Reducers.of(type, op);
        return submit(blocking, new OpDescriptor(Operation.REDUCE, type, op, root, count), ctx ->
        {
            algorithms.reduce(bytes)
                .reduce(ctx, out == null ? in : inputFor(in, out, bytes), out, (int)count, type, reducer, root);
            if (op == ReduceOp.AVG && out != null)
            {
                Reducers.divide(out, 0, (int)count, type, worldSize());
            }
        });
    }

    @Override
    public void allToAll(final ByteBuffer send, final ByteBuffer recv, final long countPerRank, final DataType type)
    {
        allToAll(send, recv, countPerRank, type, true).join();
    }

    @Override
    public CommFuture allToAllAsync(
        final ByteBuffer send, final ByteBuffer recv, final long countPerRank, final DataType type)
    {
        return allToAll(send, recv, countPerRank, type, false);
    }

    private CommFuture allToAll(
        final ByteBuffer send, final ByteBuffer recv, final long countPerRank, final DataType type,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("countPerRank", countPerRank, type, worldSize());
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_TO_ALL, type, null, OpDescriptor.NO_ROOT, countPerRank);
        return submit(blocking, desc, ctx ->
        {
            // Blocks land in recv while send is still being read: overlapping memory needs its own copy first.
            final ByteBuffer source = Checks.overlap(in, out) ? stage(in, bytes) : in;
            algorithms.allToAll(bytes).allToAll(ctx, source, out, (int)countPerRank, type);
        });
    }

    @Override
    public void send(final ByteBuffer buf, final long count, final DataType type, final int peer)
    {
        send(buf, count, type, peer, true).join();
    }

    @Override
    public CommFuture sendAsync(final ByteBuffer buf, final long count, final DataType type, final int peer)
    {
        return send(buf, count, type, peer, false);
    }

    private CommFuture send(
        final ByteBuffer buf, final long count, final DataType type, final int peer, final boolean blocking)
    {
        return pointToPoint(true, buf, count, type, peer, blocking);
    }

    @Override
    public void recv(final ByteBuffer buf, final long count, final DataType type, final int peer)
    {
        recv(buf, count, type, peer, true).join();
    }

    @Override
    public CommFuture recvAsync(final ByteBuffer buf, final long count, final DataType type, final int peer)
    {
        return recv(buf, count, type, peer, false);
    }

    private CommFuture recv(
        final ByteBuffer buf, final long count, final DataType type, final int peer, final boolean blocking)
    {
        return pointToPoint(false, buf, count, type, peer, blocking);
    }

    /**
     * A send or a receive: the payload in segments, each a message of its own, matched in issue order per peer.
     */
    private CommFuture pointToPoint(
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
        return submitPointToPoint(blocking, desc, peer, send, ctx ->
        {
            final Request[] transfers = new Request[segments(bytes)];
            for (int k = 0; k < transfers.length; k++)
            {
                final long tag = Tags.of(Tags.P2P_PHASE, 0, k);
                final int offset = k * segmentBytes();
                final int length = Math.min(segmentBytes(), bytes - offset);
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
        return Math.max(1, (int)(((long)bytes + segmentBytes() - 1) / segmentBytes()));
    }

    @Override
    public void barrier()
    {
        barrier(true).join();
    }

    @Override
    public CommFuture barrierAsync()
    {
        return barrier(false);
    }

    private CommFuture barrier(final boolean blocking)
    {
        return submit(blocking, new OpDescriptor(Operation.BARRIER, null, null, OpDescriptor.NO_ROOT, 0),
            ctx -> algorithms.barrier().barrier(ctx));
    }

    // ---------------------------------------------------------------- array conveniences

    @Override
    public void allReduce(final float[] data, final ReduceOp op)
    {
        Checks.notNull(data, "data");
        staged(data.length, DataType.FP32, b -> b.asFloatBuffer().put(data),
            b -> allReduce(b, b, data.length, DataType.FP32, op), b -> b.asFloatBuffer().get(data));
    }

    @Override
    public void allReduce(final double[] data, final ReduceOp op)
    {
        Checks.notNull(data, "data");
        staged(data.length, DataType.FP64, b -> b.asDoubleBuffer().put(data),
            b -> allReduce(b, b, data.length, DataType.FP64, op), b -> b.asDoubleBuffer().get(data));
    }

    @Override
    public void allReduce(final int[] data, final ReduceOp op)
    {
        Checks.notNull(data, "data");
        staged(data.length, DataType.INT32, b -> b.asIntBuffer().put(data),
            b -> allReduce(b, b, data.length, DataType.INT32, op), b -> b.asIntBuffer().get(data));
    }

    @Override
    public void allReduce(final long[] data, final ReduceOp op)
    {
        Checks.notNull(data, "data");
        staged(data.length, DataType.INT64, b -> b.asLongBuffer().put(data),
            b -> allReduce(b, b, data.length, DataType.INT64, op), b -> b.asLongBuffer().get(data));
    }

    @Override
    public void broadcast(final float[] data, final int root)
    {
        Checks.notNull(data, "data");
        staged(data.length, DataType.FP32, b -> b.asFloatBuffer().put(data),
            b -> broadcast(b, data.length, DataType.FP32, root), b -> b.asFloatBuffer().get(data));
    }

    @Override
    public void broadcast(final double[] data, final int root)
    {
        Checks.notNull(data, "data");
        staged(data.length, DataType.FP64, b -> b.asDoubleBuffer().put(data),
            b -> broadcast(b, data.length, DataType.FP64, root), b -> b.asDoubleBuffer().get(data));
    }

    @Override
    public void broadcast(final int[] data, final int root)
    {
        Checks.notNull(data, "data");
        staged(data.length, DataType.INT32, b -> b.asIntBuffer().put(data),
            b -> broadcast(b, data.length, DataType.INT32, root), b -> b.asIntBuffer().get(data));
    }

    @Override
    public void broadcast(final long[] data, final int root)
    {
        Checks.notNull(data, "data");
        staged(data.length, DataType.INT64, b -> b.asLongBuffer().put(data),
            b -> broadcast(b, data.length, DataType.INT64, root), b -> b.asLongBuffer().get(data));
    }

    /**
     * Runs an array convenience through a direct staging buffer: fill it from the array, run the operation in place,
     * copy the result back.
     */
    private static void staged(
        final int length,
        final DataType type,
        final Consumer<ByteBuffer> fill,
        final Consumer<ByteBuffer> operation,
        final Consumer<ByteBuffer> drain)
    {
        final ByteBuffer staging = staging((long)length * type.size());
        fill.accept(staging);
        operation.accept(staging);
        drain.accept(staging);
    }

    private static ByteBuffer staging(final long bytes)
    {
        if (bytes > Integer.MAX_VALUE)
        {
            throw new IllegalArgumentException("data is over 2 GiB, the most a ByteBuffer holds");
        }
        return ByteBuffer.allocateDirect((int)bytes).order(ByteOrder.nativeOrder());
    }

    // ---------------------------------------------------------------- V collectives, scatter, gather

    @Override
    public void allGatherV(
        final ByteBuffer send, final long sendCount, final ByteBuffer recv, final long[] recvCounts,
        final long[] recvDispls, final DataType type)
    {
        allGatherV(send, sendCount, recv, recvCounts, recvDispls, type, true).join();
    }

    @Override
    public CommFuture allGatherVAsync(
        final ByteBuffer send, final long sendCount, final ByteBuffer recv, final long[] recvCounts,
        final long[] recvDispls, final DataType type)
    {
        return allGatherV(send, sendCount, recv, recvCounts, recvDispls, type, false);
    }

    /**
     * In place (MPI_IN_PLACE) when {@code send} is this rank's block of {@code recv}; the algorithm reads
     * {@code send} before it writes {@code recv}, so any other overlap is fine too. The fingerprint's count is the
     * total of {@code recvCounts}, the same on every rank that passes the same counts.
     */
    private CommFuture allGatherV(
        final ByteBuffer send, final long sendCount, final ByteBuffer recv, final long[] recvCounts,
        final long[] recvDispls, final DataType type, final boolean blocking)
    {
        final int bytes = Checks.bytes("sendCount", sendCount, type, 1);
        final int n = worldSize();
        final int[] counts = Checks.perRank("recvCounts", recvCounts, n);
        final int[] displs = Checks.perRank("recvDispls", recvDispls, n);
        Checks.ownCount("sendCount", sendCount, "recvCounts", counts, rank);
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final int extent = Checks.blocks("recv", recv, "recvCounts", counts, "recvDispls", displs, type);
        final ByteBuffer out = Checks.region("recv", recv, extent, type, true);
        Checks.disjoint("recvDispls", counts, displs);
        final long total = Checks.total("recvCounts", counts, type);
        final OpDescriptor desc = new OpDescriptor(Operation.ALL_GATHER_V, type, null, OpDescriptor.NO_ROOT, total);
        return submit(blocking, desc, ctx ->
            algorithms.allGatherV(total * type.size()).allGatherV(ctx, in, out, counts, displs, type));
    }

    @Override
    public void reduceScatterV(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long recvCount, final DataType type, final ReduceOp op)
    {
        reduceScatterV(send, sendCounts, sendDispls, recv, recvCount, type, op, true).join();
    }

    @Override
    public CommFuture reduceScatterVAsync(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long recvCount, final DataType type, final ReduceOp op)
    {
        return reduceScatterV(send, sendCounts, sendDispls, recv, recvCount, type, op, false);
    }

    /**
     * The ring reduces in scratch and writes {@code recv} last, so {@code recv} may overlap {@code send} anywhere:
     * in place (MPI_IN_PLACE) when it is this rank's block of {@code send}. Input blocks may overlap each other. The
     * fingerprint's count is the total of {@code sendCounts}.
     */
    private CommFuture reduceScatterV(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long recvCount, final DataType type, final ReduceOp op, final boolean blocking)
    {
        final int bytes = Checks.bytes("recvCount", recvCount, type, 1);
        Checks.reduceOp(op, type);
        final int n = worldSize();
        final int[] counts = Checks.perRank("sendCounts", sendCounts, n);
        final int[] displs = Checks.perRank("sendDispls", sendDispls, n);
        Checks.ownCount("recvCount", recvCount, "sendCounts", counts, rank);
        final int extent = Checks.blocks("send", send, "sendCounts", counts, "sendDispls", displs, type);
        final ByteBuffer in = Checks.region("send", send, extent, type, false);
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final long total = Checks.total("sendCounts", counts, type);
        final Reducer reducer = Reducers.of(type, op);
        final OpDescriptor desc = new OpDescriptor(Operation.REDUCE_SCATTER_V, type, op, OpDescriptor.NO_ROOT, total);
        return submit(blocking, desc, ctx ->
        {
            algorithms.reduceScatterV(total * type.size())
                .reduceScatterV(ctx, in, counts, displs, out, type, reducer);
            if (op == ReduceOp.AVG)
            {
                Reducers.divide(out, 0, (int)recvCount, type, n);
            }
        });
    }

    @Override
    public void allToAllV(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long[] recvCounts, final long[] recvDispls, final DataType type)
    {
        allToAllV(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, true).join();
    }

    @Override
    public CommFuture allToAllVAsync(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long[] recvCounts, final long[] recvDispls, final DataType type)
    {
        return allToAllV(send, sendCounts, sendDispls, recv, recvCounts, recvDispls, type, false);
    }

    /**
     * Not in place: {@code send} overlapping {@code recv} is copied first (MPI_IN_PLACE, which takes the send layout
     * from the receive one, is the case of the same memory with the same counts and displacements). No count is the
     * same on every rank here, so the fingerprint's count is 0; each pair's block size is checked by the length of
     * its messages instead.
     */
    private CommFuture allToAllV(
        final ByteBuffer send, final long[] sendCounts, final long[] sendDispls, final ByteBuffer recv,
        final long[] recvCounts, final long[] recvDispls, final DataType type, final boolean blocking)
    {
        Checks.notNull(type, "type");
        final int n = worldSize();
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
        return submit(blocking, desc, ctx ->
        {
            // Blocks land in recv while send is still being read: overlapping memory needs its own copy first.
            final ByteBuffer source = Checks.overlap(in, out) ? stage(in, sendExtent) : in;
            algorithms.allToAllV(sent * type.size())
                .allToAllV(ctx, source, sCounts, sDispls, out, rCounts, rDispls, type);
        });
    }

    @Override
    public void scatter(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final int root)
    {
        scatter(send, recv, recvCount, type, root, true).join();
    }

    @Override
    public CommFuture scatterAsync(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final int root)
    {
        return scatter(send, recv, recvCount, type, root, false);
    }

    /**
     * At the root, in place (MPI_IN_PLACE) when {@code recv} is its block of {@code send}; the algorithm writes
     * {@code recv} last, so any other overlap is fine too.
     */
    private CommFuture scatter(
        final ByteBuffer send, final ByteBuffer recv, final long recvCount, final DataType type, final int root,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("recvCount", recvCount, type, 1);
        final int n = worldSize();
        final int sendBytes = Checks.bytes("recvCount", recvCount, type, n);
        Checks.rank("root", root, n);
        final ByteBuffer in = rank == root ? Checks.region("send", send, sendBytes, type, false) : null;
        final ByteBuffer out = Checks.region("recv", recv, bytes, type, true);
        final OpDescriptor desc = new OpDescriptor(Operation.SCATTER, type, null, root, recvCount);
        return submit(blocking, desc, ctx ->
            algorithms.scatter(sendBytes).scatter(ctx, in, out, (int)recvCount, type, root));
    }

    @Override
    public void gather(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type, final int root)
    {
        gather(send, recv, sendCount, type, root, true).join();
    }

    @Override
    public CommFuture gatherAsync(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type, final int root)
    {
        return gather(send, recv, sendCount, type, root, false);
    }

    /**
     * At the root, in place (MPI_IN_PLACE) when {@code send} is its block of {@code recv}; the algorithm reads
     * {@code send} before it writes {@code recv}, so any other overlap is fine too.
     */
    private CommFuture gather(
        final ByteBuffer send, final ByteBuffer recv, final long sendCount, final DataType type, final int root,
        final boolean blocking)
    {
        final int bytes = Checks.bytes("sendCount", sendCount, type, 1);
        final int n = worldSize();
        final int recvBytes = Checks.bytes("sendCount", sendCount, type, n);
        Checks.rank("root", root, n);
        final ByteBuffer in = Checks.region("send", send, bytes, type, false);
        final ByteBuffer out = rank == root ? Checks.region("recv", recv, recvBytes, type, true) : null;
        final OpDescriptor desc = new OpDescriptor(Operation.GATHER, type, null, root, sendCount);
        return submit(blocking, desc, ctx ->
            algorithms.gather(recvBytes).gather(ctx, in, out, (int)sendCount, type, root));
    }

    // ---------------------------------------------------------------- split

    @Override
    public Communicator split(final int color, final int key)
    {
        final int n = worldSize();
        final ByteBuffer mine = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        mine.putInt(0, color).putInt(4, key);
        final ByteBuffer all = ByteBuffer.allocateDirect(8 * n).order(ByteOrder.nativeOrder());
        final OpDescriptor desc = new OpDescriptor(Operation.SPLIT, DataType.INT32, null, OpDescriptor.NO_ROOT, 2);
        final int splitIndex;
        enterIssue(IssueGuard.COLLECTIVES, desc); // the index and the sequence number pair up alike on every rank
        try
        {
            splitIndex = splits++;
            submit(true, desc, ctx -> splitExchange.allGather(ctx, mine, all, 2, DataType.INT32));
        }
        finally
        {
            issueGuard.exit(IssueGuard.COLLECTIVES);
        }
        if (color < 0)
        {
            return null;
        }
        final List<int[]> members = new ArrayList<>();
        for (int r = 0; r < n; r++)
        {
            if (all.getInt(8 * r) == color)
            {
                members.add(new int[]{all.getInt(8 * r + 4), r});
            }
        }
        members.sort((a, b) -> a[0] != b[0] ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]));
        final int[] subRanks = new int[members.size()];
        final int[] subGlobal = new int[members.size()];
        int newRank = -1;
        for (int i = 0; i < subRanks.length; i++)
        {
            subRanks[i] = members.get(i)[1];
            subGlobal[i] = globalRanks[subRanks[i]];
            if (subRanks[i] == rank)
            {
                newRank = i;
            }
        }
        final long subId = mix(commId, splitIndex, color);
        fabric.retain();
        try
        {
            final CommunicatorImpl sub =
                new CommunicatorImpl(config, fabric, subId, newRank, subGlobal, topology.subset(subRanks));
            // The links are the parent's: measured once, at the parent's creation.
            sub.algorithms.linkCosts(algorithms.linkCosts());
            return sub;
        }
        catch (final RuntimeException ex)
        {
            fabric.release();
            throw ex;
        }
    }

    /** SplitMix64 over the parent id, split index and colour: every member derives the same id, unlikely to clash. */
    private static long mix(final long parent, final int splitIndex, final int color)
    {
        long z = parent ^ (0x9E3779B97F4A7C15L * (splitIndex + 1)) ^ ((long)color << 32);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return (z ^ (z >>> 31)) & Long.MAX_VALUE;
    }

    ProgressEngine progressEngine()
    {
        return fabric.progressEngine();
    }

    WaitPolicy waitPolicy()
    {
        return waitPolicy;
    }

    /** The node of a rank of this communicator, as the topology numbers them (in order of their lowest ranks). */
    int nodeOf(final int peer)
    {
        return topology.nodeOf(peer);
    }

    // ---------------------------------------------------------------- execution

    @FunctionalInterface
    interface OpBody
    {
        void run(OpContext ctx);
    }

    @FunctionalInterface
    interface PointToPointBody
    {
        /** Posts the operation's transfers without waiting for them. */
        Request[] post(OpContext ctx);
    }

    /**
     * Numbers a collective and queues it on the stream, or runs it here when the call blocks and the stream is idle;
     * a blocking call returns once the collective has completed.
     */
    private CommFuture submit(final boolean blocking, final OpDescriptor desc, final OpBody body)
    {
        final OpFuture future = new OpFuture();
        return issue(IssueGuard.COLLECTIVES, desc, blocking, false, future, () -> nextSeq++,
            seq -> execute(desc, seq, body, future));
    }

    /**
     * Numbers a send or a receive, per peer and direction, and posts it in issue order: here when the stream is
     * idle, whether the call blocks or not (posting does not wait), else behind what is queued. A blocking call
     * returns once it has completed.
     */
    private CommFuture submitPointToPoint(
        final boolean blocking, final OpDescriptor desc, final int peer, final boolean send, final PointToPointBody body)
    {
        final PointToPointOp op = new PointToPointOp();
        return issue(IssueGuard.pointToPoint(peer, send), desc, blocking, true, op,
            () -> send ? p2pSendSeq[peer]++ : p2pRecvSeq[peer]++, seq -> post(desc, seq, body, op));
    }

    /**
     * Issues an operation in its lane: takes its sequence number and runs it on the stream, in order, or on this
     * thread when the stream is idle and {@code blocking || claimWhenAsync}.
     *
     * @param nextSeq the lane's counter, read and advanced under the issue lock.
     * @param run     runs the operation numbered {@code seq}.
     */
    private <F extends CommFuture> F issue(
        final int lane, final OpDescriptor desc, final boolean blocking, final boolean claimWhenAsync, final F future,
        final LongSupplier nextSeq, final LongConsumer run)
    {
        enterIssue(lane, desc);
        try
        {
            final long seq;
            final boolean claimed;
            synchronized (issueLock)
            {
                checkOpen(desc);
                seq = nextSeq.getAsLong();
                claimed = (blocking || claimWhenAsync) && stream.tryClaim();
                if (!claimed)
                {
                    stream.execute(() -> run.accept(seq));
                }
            }
            if (claimed)
            {
                runClaimed(() -> run.accept(seq));
            }
            if (blocking)
            {
                future.join();
            }
            return future;
        }
        finally
        {
            issueGuard.exit(lane);
        }
    }

    /**
     * Takes an issue lane for the calling thread, or fails the communicator on every rank when another thread holds
     * it: the order of the two threads' operations was decided by a race.
     */
    private void enterIssue(final int lane, final OpDescriptor desc)
    {
        final IssueGuard.Holder other = issueGuard.enter(lane, desc);
        if (other != null)
        {
            throw fail(new HcclException(ErrorCode.E_CONCURRENT, rank, HcclException.UNKNOWN_RANK, desc.operation(),
                HcclException.NO_SEQUENCE, IssueGuard.Holder.name(Thread.currentThread()) + " issued " + desc +
                " while " + IssueGuard.Holder.name(other.thread) + " was issuing " + other.desc +
                " on the same communicator: the order of two threads' operations is decided by a race, differently " +
                "on each rank, which would mix their data. Issue from one thread, or let a thread issue only after " +
                "the other's call has returned (a blocking call issues until it returns)", null));
        }
    }

    /**
     * Runs an operation on the caller's thread, the stream being claimed for it: operations issued meanwhile queue
     * behind it, as they would behind one the stream runs.
     */
    private void runClaimed(final Runnable op)
    {
        try
        {
            op.run();
        }
        finally
        {
            stream.release();
        }
    }

    private void checkOpen(final OpDescriptor desc)
    {
        if (closed)
        {
            throw new IllegalStateException("communicator of rank " + rank + " is closed; cannot run " + desc);
        }
    }

    /** Runs a collective, after the point-to-point operations issued before it. */
    private void execute(final OpDescriptor desc, final long seq, final OpBody body, final OpFuture future)
    {
        completePointToPoint();
        final HcclException failed = failure;
        if (failed != null)
        {
            future.fail(failedEarlier(desc, seq, failed));
            return;
        }
        running = new RunningOp(desc, seq);
        try
        {
            mailbox.beginOp(seq, desc);
            // Driving the transport from the start, sends are written by this thread, not handed to another.
            final boolean driving = enterEngine();
            try
            {
                body.run(new OpContext(this, desc, seq));
            }
            finally
            {
                exitEngine(driving);
            }
            final String leftover = mailbox.endOp(seq);
            if (leftover != null)
            {
                throw new HcclException(ErrorCode.E_MISMATCH, rank, HcclException.UNKNOWN_RANK, desc.operation(), seq,
                    "the ranks disagree on how much " + desc + " moves: " + leftover, null);
            }
            future.complete();
        }
        catch (final RuntimeException | Error ex)
        {
            future.fail(failOn(desc, seq, ex));
        }
        finally
        {
            running = null;
        }
    }

    /** Posts a send's or a receive's transfers; the operation completes when they have. */
    private void post(final OpDescriptor desc, final long seq, final PointToPointBody body, final PointToPointOp op)
    {
        final HcclException failed = failure;
        if (failed != null)
        {
            op.fail(failedEarlier(desc, seq, failed));
            return;
        }
        running = new RunningOp(desc, seq);
        try
        {
            final OpContext ctx = new OpContext(this, desc, seq);
            final Request[] transfers;
            final boolean driving = enterEngine();
            try
            {
                transfers = body.post(ctx);
            }
            finally
            {
                exitEngine(driving);
            }
            op.posted(ctx, transfers);
            postedPointToPoint.add(op);
        }
        catch (final RuntimeException | Error ex)
        {
            op.fail(failOn(desc, seq, ex));
        }
        finally
        {
            running = null;
        }
    }

    /** Waits for the point-to-point operations posted so far, as a stream would before its next operation. */
    private void completePointToPoint()
    {
        postedPointToPoint.completeAll((op, ex) -> LOG.debug("rank {}: {} failed: {}", rank, op, ex.getMessage()));
    }

    private boolean enterEngine()
    {
        final ProgressEngine engine = fabric.progressEngine();
        return null != engine && engine.enter();
    }

    private void exitEngine(final boolean driving)
    {
        if (driving)
        {
            fabric.progressEngine().exit();
        }
    }

    private HcclException failedEarlier(final OpDescriptor desc, final long seq, final HcclException failed)
    {
        return new HcclException(failed.errorCode(), rank, failed.peer(), desc.operation(), seq,
            "the communicator failed earlier: " + failed.getMessage(), failed);
    }

    /** Fails the communicator with what an operation threw: a wire failure as it is, anything else as a bug. */
    private HcclException failOn(final OpDescriptor desc, final long seq, final Throwable thrown)
    {
        return fail(thrown instanceof HcclException ? (HcclException)thrown : new HcclException(ErrorCode.E_INTERNAL,
            rank, HcclException.UNKNOWN_RANK, desc.operation(), seq, "internal error in " + desc + ": " + thrown,
            thrown));
    }

    private static final class RunningOp
    {
        final OpDescriptor desc;
        final long seq;

        RunningOp(final OpDescriptor desc, final long seq)
        {
            this.desc = desc;
            this.seq = seq;
        }
    }

    /**
     * Fails the communicator, once: the mailbox fails every posted receive, and the peers are told.
     *
     * @param cause the failure.
     * @return the communicator's failure: {@code cause}, or the earlier one.
     */
    HcclException failure()
    {
        return failure;
    }

    HcclException fail(final HcclException cause)
    {
        synchronized (this)
        {
            if (failure != null)
            {
                return failure;
            }
            failure = cause;
        }
        LOG.error("communicator failed: {}", cause.getMessage());
        // Tell the peers before waking anything here: a woken operation may close the communicator, and its goodbye
        // must not reach a peer before the reason does.
        try
        {
            for (int peer = 0; peer < globalRanks.length; peer++)
            {
                if (peer != rank)
                {
                    try
                    {
                        link(peer).abort(commId, cause.getMessage());
                    }
                    catch (final RuntimeException ex)
                    {
                        LOG.debug("could not tell rank {} of the failure: {}", peer, ex.toString());
                    }
                }
            }
        }
        finally
        {
            peersTold.countDown();
        }
        mailbox.fail(cause);
        return cause;
    }

    @Override
    public void onFault(final ErrorCode code, final int globalPeer, final String message)
    {
        final int peer = globalPeer >= 0 && globalPeer < localOfGlobal.length ? localOfGlobal[globalPeer] : -1;
        final RunningOp op = running;
        final String text = message.replace("{peer}", peer >= 0 ? "rank " + peer :
            globalPeer >= 0 ? "global rank " + globalPeer : "a peer");
        fail(new HcclException(code, rank, peer >= 0 ? peer : HcclException.UNKNOWN_RANK,
            op == null ? null : op.desc.operation(), op == null ? HcclException.NO_SEQUENCE : op.seq, text, null));
    }

    private void checkPeer(final int peer)
    {
        Checks.rank("peer", peer, worldSize());
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

    private ByteBuffer stage(final ByteBuffer in, final int bytes)
    {
        final ByteBuffer copy = scratch(STAGING_SLOT, bytes);
        Copies.copy(copy, 0, in, 0, bytes);
        return copy;
    }

    @Override
    public void close()
    {
        synchronized (issueLock)
        {
            if (closed)
            {
                return;
            }
            closed = true;
        }
        if (stream.drainAndStop(config.execTimeout().toMillis() + CLOSE_WAIT_SLACK_MILLIS))
        {
            completePointToPoint(); // the stream has stopped: this thread is the only one left to touch the list
        }
        else
        {
            LOG.warn("rank {}: operations still running at close", rank);
        }
        if (failure != null)
        {
            try
            {
                peersTold.await(CLOSE_WAIT_SLACK_MILLIS, TimeUnit.MILLISECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        fabric.dispatcher().remove(commId);
        fabric.release();
    }

    @Override
    public String toString()
    {
        return "Communicator{rank=" + rank + ", worldSize=" + worldSize() + ", localRank=" + localRank +
            ", localSize=" + localSize + ", transport=" + fabric.transportName() + "}";
    }
}
