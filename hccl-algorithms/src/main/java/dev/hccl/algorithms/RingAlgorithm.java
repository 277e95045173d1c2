package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import dev.hccl.api.spi.Reducer;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;

import java.nio.ByteBuffer;

import static dev.hccl.algorithms.Partition.mod;

/**
 * The pipelined ring: bandwidth-optimal for large messages.
 * <p>
 * The buffer is cut into {@code n} chunks, one per rank. <b>Reduce-scatter</b>: in step {@code s} (0 to n-2) rank
 * {@code r} sends chunk {@code r-s-1} to its right neighbour and reduces chunk {@code r-s-2} received from its left
 * one into its own copy; the chunk it sends in step {@code s+1} is the one it reduced in step {@code s}, so after
 * n-1 steps rank {@code r} holds chunk {@code r} reduced over all ranks. <b>All-gather</b>: in step {@code s} rank
 * {@code r} sends chunk {@code r-s} and receives chunk {@code r-s-1}, so after n-1 steps every rank holds every chunk.
 * All-reduce is reduce-scatter then all-gather.
 * <p>
 * <b>Pipelining.</b> Each chunk is cut into segments. Every receive of both phases is posted before the first send,
 * so data never waits in an unexpected-message buffer however far a neighbour runs ahead; segment {@code k} of step
 * {@code s} is forwarded as soon as segment {@code k} of step {@code s-1} has arrived, across the phase boundary too,
 * so sending, receiving and reducing overlap instead of waiting for whole chunks or phases. Posting early is safe:
 * a chunk's all-gather data can only arrive after its owner has reduced it, which needs every contribution this rank
 * sends for that chunk, so it never overwrites bytes still to be reduced into or sent.
 * <p>
 * Each chunk is reduced in one fixed order along the ring and then copied, so every rank ends with the same bits.
 * <p>
 * <b>Broadcast</b> under this name is the binomial scatter of the chunks followed by a ring all-gather of them
 * ({@link ScatterRingBroadcast}), the large-message broadcast.
 * <p>
 * <b>Cost</b>, for {@code m} bytes as {@link CostedAlgorithm} counts them: every ring step moves one chunk,
 * {@code m/n} bytes, per rank, and each reduce-scatter step reduces one.
 * <ul>
 *     <li>all-reduce: {@code 2(n-1) alpha + 2(n-1)/n m beta + (n-1)/n m gamma};</li>
 *     <li>all-gather ({@code m} the whole output): {@code (n-1) alpha + (n-1)/n m beta};</li>
 *     <li>reduce-scatter ({@code m} the whole input): {@code (n-1) alpha + (n-1)/n m beta + (n-1)/n m gamma};</li>
 *     <li>broadcast: {@code (ceil(log2 n) + n - 1) alpha + 2(n-1)/n m beta}.</li>
 * </ul>
 * Pipelining's extra messages per segment are not modelled: they overlap with the transfer they cut up.
 */
public final class RingAlgorithm
    implements AllReduceAlgorithm, AllGatherAlgorithm, ReduceScatterAlgorithm, BroadcastAlgorithm, CostedAlgorithm
{
    /** The name, as HCCL_ALGO spells it. */
    public static final String NAME = "ring";

    private static final int PHASE_REDUCE_SCATTER = 1;
    private static final int PHASE_ALL_GATHER = 2;
    /** Reduce-scatter step s sends chunk rank-s-1 and reduces chunk rank-s-2 received from the left. */
    private static final int REDUCE_SCATTER_SEND_SHIFT = 1;
    private static final int REDUCE_SCATTER_RECV_SHIFT = 2;
    /** All-gather step s sends chunk rank-s and receives chunk rank-s-1. */
    private static final int ALL_GATHER_SEND_SHIFT = 0;
    private static final int ALL_GATHER_RECV_SHIFT = 1;

    @Override
    public String name()
    {
        return NAME;
    }

    /**
     * {@inheritDoc}
     * <p>
     * The ring runs through each node's ranks in turn (ranks ordered by node, then rank), so that it crosses between
     * nodes once per node whatever the rank numbering: with nodes {@code [0, 1, 0, 1]} the ring {@code 0 2 1 3}
     * crosses twice where {@code 0 1 2 3} would cross four times. The result is the same on every rank either way.
     */
    @Override
    public void allReduce(
        final PeerGroup whole,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int count,
        final DataType type,
        final Reducer reducer)
    {
        final PeerGroup group = SubGroup.byNode(whole);
        final int n = group.size();
        if (LocalCases.allReduceDone(group, send, recv, count, count * type.size()))
        {
            return;
        }
        final Partition chunks = new Partition(count, n, type.size(), group.segmentBytes());
        // Out of place, nothing is copied up front: each reduce-scatter receive computes input op received into the
        // output as the bytes arrive, copying each piece of the input just before reducing into it, while it is in
        // cache. Chunk rank-1 is the only one not reduced here: this rank only sends it (reduce-scatter step 0,
        // straight from the input) and then receives its final value.
        final Request[][] reduced = post(group, recv, chunks, PHASE_REDUCE_SCATTER, REDUCE_SCATTER_RECV_SHIFT, reducer,
            send != recv ? send : null);
        final Request[][] gathered = post(group, recv, chunks, PHASE_ALL_GATHER, ALL_GATHER_RECV_SHIFT, null, null);
        final Requests sends = new Requests();
        sendSteps(group, recv, send, chunks, PHASE_REDUCE_SCATTER, REDUCE_SCATTER_SEND_SHIFT, null, reduced, sends);
        // All-gather step 0 sends this rank's chunk as each of its segments finishes its last reduction.
        sendSteps(group, recv, recv, chunks, PHASE_ALL_GATHER, ALL_GATHER_SEND_SHIFT, reduced[n - 2], gathered, sends);
        Requests.awaitAll(group, gathered[n - 2]);
        sends.awaitAll(group);
    }

    @Override
    public void allGather(
        final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int sendCount, final DataType type)
    {
        final int blockBytes = sendCount * type.size();
        final PeerGroup ring = SubGroup.byNode(group);
        if (ring == group || sendCount == 0)
        {
            Copies.copy(recv, group.rank() * blockBytes, send, 0, blockBytes);
            if (group.size() > 1 && sendCount > 0)
            {
                allGatherInPlace(group, recv, Partition.blocks(sendCount, group.size(), type.size(),
                    group.segmentBytes()));
            }
            return;
        }
        // Nodes with interleaved ranks: the ring goes through each node's ranks in turn, gathering in its own order
        // in scratch, and the blocks then move to their ranks' places (one copy of the output).
        final int n = group.size();
        final ByteBuffer work = group.scratch(0, n * blockBytes);
        Copies.copy(work, ring.rank() * blockBytes, send, 0, blockBytes);
        allGatherInPlace(ring, work, Partition.blocks(sendCount, n, type.size(), group.segmentBytes()));
        for (int p = 0; p < n; p++)
        {
            Copies.copy(recv, SubGroup.member(group, ring, p) * blockBytes, work, p * blockBytes, blockBytes);
        }
    }

    @Override
    public void reduceScatter(
        final PeerGroup group,
        final ByteBuffer send,
        final ByteBuffer recv,
        final int recvCount,
        final DataType type,
        final Reducer reducer)
    {
        final int n = group.size();
        final int blockBytes = recvCount * type.size();
        if (n == 1 || recvCount == 0)
        {
            Copies.copy(recv, 0, send, 0, blockBytes);
            return;
        }
        // The send buffer is read-only to us: reduce in a scratch copy, then hand out this rank's block. The ring
        // goes through each node's ranks in turn, so the copy puts the blocks in the ring's order.
        final PeerGroup ring = SubGroup.byNode(group);
        final ByteBuffer work = group.scratch(0, n * blockBytes);
        if (ring == group)
        {
            Copies.copy(work, 0, send, 0, n * blockBytes);
        }
        else
        {
            for (int p = 0; p < n; p++)
            {
                Copies.copy(work, p * blockBytes, send, SubGroup.member(group, ring, p) * blockBytes, blockBytes);
            }
        }
        final Partition blocks = Partition.blocks(recvCount, n, type.size(), group.segmentBytes());
        reduceScatterInPlace(ring, work, blocks, reducer);
        Copies.copy(recv, 0, work, ring.rank() * blockBytes, blockBytes);
    }

    @Override
    public void broadcast(
        final PeerGroup group, final ByteBuffer buf, final int count, final DataType type, final int root)
    {
        ScatterRingBroadcast.broadcast(group, buf, count, type, root);
    }

    /**
     * {@inheritDoc}
     * <p>
     * All-reduce, all-gather, reduce-scatter and broadcast, by the formulas of the class description.
     */
    @Override
    public double predictSeconds(
        final Operation operation, final int worldSize, final long bytes, final CostParameters cost)
    {
        CostTerms.check(worldSize, bytes);
        final int n = worldSize;
        final double share = CostTerms.share(n, bytes);
        switch (operation)
        {
            case ALL_REDUCE:
                return 2.0 * (n - 1) * cost.alpha() + 2 * share * cost.beta() + share * cost.gamma();
            case ALL_GATHER:
                return (n - 1) * cost.alpha() + share * cost.beta();
            case REDUCE_SCATTER:
                return (n - 1) * cost.alpha() + share * cost.beta() + share * cost.gamma();
            case BROADCAST:
                return (double)(CostTerms.ceilLog2(n) + n - 1) * cost.alpha() + 2 * share * cost.beta();
            default:
                throw CostTerms.unsupported(NAME, operation);
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * Across nodes each step waits for its slowest link, a network one. All-reduce, all-gather and reduce-scatter run
     * through each node's ranks in turn, so only one ring edge leaves each node and it has the node's network link to
     * itself. Broadcast's ring follows the rank order: when nodes' ranks are interleaved, as many of its edges as a
     * node has ranks may share that link.
     */
    @Override
    public double predictSeconds(
        final Operation operation, final RankLayout layout, final long bytes, final LinkCosts links)
    {
        if (layout.nodeCount() == 1)
        {
            return predictSeconds(operation, layout.worldSize(), bytes, links.local());
        }
        final boolean oneEdgePerNode = operation != Operation.BROADCAST || layout.contiguous();
        return predictSeconds(operation, layout.worldSize(), bytes,
            oneEdgePerNode ? links.network() : links.network().sharedBy(layout.mostPerNode()));
    }

    /**
     * Reduce-scatter within {@code work}: afterwards chunk {@code rank} holds the reduction over all ranks.
     */
    static void reduceScatterInPlace(
        final PeerGroup group, final ByteBuffer work, final Partition chunks, final Reducer reducer)
    {
        final Request[][] reduced =
            post(group, work, chunks, PHASE_REDUCE_SCATTER, REDUCE_SCATTER_RECV_SHIFT, reducer, null);
        final Requests sends = new Requests();
        sendSteps(group, work, work, chunks, PHASE_REDUCE_SCATTER, REDUCE_SCATTER_SEND_SHIFT, null, reduced, sends);
        Requests.awaitAll(group, reduced[group.size() - 2]);
        sends.awaitAll(group);
    }

    /**
     * All-gather within {@code work}: chunk {@code rank} must hold this rank's data; afterwards every chunk does.
     */
    static void allGatherInPlace(final PeerGroup group, final ByteBuffer work, final Partition chunks)
    {
        final Request[][] gathered = post(group, work, chunks, PHASE_ALL_GATHER, ALL_GATHER_RECV_SHIFT, null, null);
        final Requests sends = new Requests();
        sendSteps(group, work, work, chunks, PHASE_ALL_GATHER, ALL_GATHER_SEND_SHIFT, null, gathered, sends);
        Requests.awaitAll(group, gathered[group.size() - 2]);
        sends.awaitAll(group);
    }

    /**
     * Posts every receive of a phase: in step {@code s}, chunk {@code rank - s - recvShift} from the left neighbour,
     * reduced into {@code work} (or copied when {@code reducer} is null); with {@code input}, each receive reduces
     * the input's bytes with the received ones into {@code work} instead ({@code work} not read): every step of the
     * reduce-scatter targets a chunk this rank has not touched yet.
     *
     * @return the receives, by step and segment.
     */
    private static Request[][] post(
        final PeerGroup group,
        final ByteBuffer work,
        final Partition chunks,
        final int phase,
        final int recvShift,
        final Reducer reducer,
        final ByteBuffer input)
    {
        final int n = group.size();
        final int left = mod(group.rank() - 1, n);
        final Request[][] received = new Request[n - 1][];
        for (int step = 0; step < n - 1; step++)
        {
            final int chunk = mod(group.rank() - step - recvShift, n);
            received[step] = new Request[chunks.segments(chunk)];
            for (int k = 0; k < received[step].length; k++)
            {
                final int offset = chunks.segmentOffset(chunk, k);
                received[step][k] = input == null ?
                    group.recvReduce(left, Tags.of(phase, step, k), work, offset, chunks.segmentBytes(chunk, k),
                        reducer) :
                    group.recvReduce(left, Tags.of(phase, step, k), work, offset, chunks.segmentBytes(chunk, k),
                        reducer, input, offset);
            }
        }
        return received;
    }

    /**
     * Sends every step of a phase: in step {@code s}, chunk {@code rank - s - sendShift} to the right neighbour,
     * each segment as soon as the receive that completes it has arrived ({@code gate} for step 0, when given, else
     * the phase's own step before). Step 0 sends from {@code firstSource}, later steps from {@code work}.
     */
    private static void sendSteps(
        final PeerGroup group,
        final ByteBuffer work,
        final ByteBuffer firstSource,
        final Partition chunks,
        final int phase,
        final int sendShift,
        final Request[] gate,
        final Request[][] received,
        final Requests sends)
    {
        final int n = group.size();
        final int right = mod(group.rank() + 1, n);
        for (int step = 0; step < n - 1; step++)
        {
            final int chunk = mod(group.rank() - step - sendShift, n);
            final Request[] before = step == 0 ? gate : received[step - 1];
            for (int k = 0, segments = chunks.segments(chunk); k < segments; k++)
            {
                if (before != null)
                {
                    group.await(before[k]);
                }
                sends.add(group.send(right, Tags.of(phase, step, k), step == 0 ? firstSource : work,
                    chunks.segmentOffset(chunk, k), chunks.segmentBytes(chunk, k)));
            }
        }
    }
}
