package dev.hccl.bench;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.bench.check.Reference;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The measuring loop of {@code hccl-bench} on one rank's communicator, as nccl-tests' {@code TimeTest} and
 * {@code BenchTime}: every rank of the communicator runs it at the same time with the same options.
 * <p>
 * For each case (type, reduction, root): a barrier, {@code -w} warm-up operations at the largest size and at the
 * smallest; then for each size, out of place and then in place: one untimed operation, a barrier, {@code -n}
 * operations issued back to back without waiting (as nccl-tests enqueues on a CUDA stream) and then awaited, the time
 * per operation combined across ranks as {@code -a} says; then {@code -c} checked runs with fresh inputs, whose wrong
 * elements are summed over ranks.
 * <p>
 * Buffers follow nccl-tests' in-place convention: in place, allGather sends from this rank's block of the receive
 * buffer, reduceScatter receives into this rank's block of the send buffer, and the other operations use one buffer
 * for both. {@link Communicator#broadcast} has a single buffer (as HCCL's), so out of place the root broadcasts from
 * its send buffer and every other rank receives into its receive buffer: the root does not copy to itself.
 */
public final class BenchRunner
{
    private final Communicator comm;
    private final BenchOptions options;
    private final BenchOp op;
    private final String algo;
    private final PrintStream out;
    private final int ranks;
    private final int rank;
    private final ByteBuffer sendBuffer;
    private final ByteBuffer recvBuffer;
    private final List<CommFuture> pending = new ArrayList<>();
    private long checkSeed;
    private long failedChecks;

    /**
     * Allocates this rank's buffers for the largest size.
     *
     * @param comm    this rank's communicator.
     * @param options what to measure; {@link BenchOptions#problemWith} must have accepted the world size.
     * @param algo    the label of the rows.
     * @param out     where rows are printed as they are measured, or null for a rank that does not print.
     */
    public BenchRunner(final Communicator comm, final BenchOptions options, final String algo, final PrintStream out)
    {
        this.comm = Objects.requireNonNull(comm, "comm");
        this.options = Objects.requireNonNull(options, "options");
        this.op = options.op();
        this.algo = Objects.requireNonNull(algo, "algo");
        this.out = out;
        this.ranks = comm.worldSize();
        this.rank = comm.rank();
        final int capacity = op == BenchOp.BARRIER ? 0 : (int)options.maxBytes();
        this.sendBuffer = buffer(capacity);
        this.recvBuffer = buffer(capacity);
    }

    /** A buffer of the largest size: registered with {@code -R}, when there is anything to register. */
    private ByteBuffer buffer(final int capacity)
    {
        return options.registered() && capacity > 0 ? comm.allocateRegistered(capacity) :
            ByteBuffer.allocateDirect(capacity).order(ByteOrder.nativeOrder());
    }

    /**
     * Runs every case over every size.
     *
     * @return the rows (the same on every rank, since times and wrong counts are combined across ranks) and the
     * footer figures.
     */
    public Sweep run()
    {
        final List<BenchRow> rows = new ArrayList<>();
        final List<Long> sizes = options.sizes();
        double busBwSum = 0;
        int busBwCount = 0;
        for (final BenchCase c : options.cases(ranks))
        {
            // No rank's first timed call should wait out another rank's set-up.
            comm.barrier();
            warmUp(c, options.maxBytes());
            warmUp(c, options.minBytes());
            for (final long size : sizes)
            {
                final SizeLayout layout = op.layout(size, c.elementSize(), ranks);
                final Measurement outOfPlace = measure(c, layout, false);
                final Measurement inPlace = measure(c, layout, true);
                final BenchRow row = new BenchRow(algo, layout.bytes(c.elementSize()), layout.paramCount(),
                    BenchTypes.name(c.type()), BenchTypes.name(c.op()), c.root(), outOfPlace, inPlace);
                rows.add(row);
                if (out != null)
                {
                    out.println(Table.row(row));
                    out.flush();
                }
                busBwSum += outOfPlace.busBw() + inPlace.busBw();
                busBwCount += 2;
            }
        }
        // nccl-tests' "out of bounds values": checks in which a rank found a wrong element, summed over ranks.
        final long[] outOfBounds = {failedChecks};
        comm.allReduce(outOfBounds, ReduceOp.SUM);
        return new Sweep(algo, rows, outOfBounds[0], busBwCount == 0 ? 0 : busBwSum / busBwCount);
    }

    private void warmUp(final BenchCase c, final long size)
    {
        final SizeLayout layout = op.layout(size, c.elementSize(), ranks);
        final Views views = views(c, layout, false);
        for (int i = 0; i < options.warmupIters(); i++)
        {
            issue(c, views, layout);
        }
        joinPending();
    }

    private Measurement measure(final BenchCase c, final SizeLayout layout, final boolean inPlace)
    {
        final Views views = views(c, layout, inPlace);
        final double settled = options.settle() ? settle(c, views, layout) : Double.NaN;
        // Untimed runs before each measurement too, not only before the sweep as nccl-tests has them: the JIT
        // recompiles a hot path that the bench's own bookkeeping (FP64 and INT64 all-reduces, the settling's too) made
        // polymorphic, and without this the second measurement of a size pays for it.
        final int untimed = Math.max(1, options.warmupIters());
        final long untimedStart = System.nanoTime();
        for (int i = 0; i < untimed; i++)
        {
            issue(c, views, layout);
        }
        joinPending();
        final double warmedSecondsPerOp = options.timeForMinimum() && !options.settle() ?
            slowest((System.nanoTime() - untimedStart) / 1e9 / untimed)[0] : settled;
        final int operations = TimedOperations.of(options, warmedSecondsPerOp);
        comm.barrier();
        final long start = System.nanoTime();
        for (int i = 0; i < operations; i++)
        {
            issue(c, views, layout);
        }
        joinPending();
        final double seconds = aggregate((System.nanoTime() - start) / 1e9 / operations);
        final long bytes = layout.bytes(c.elementSize());
        final double algBw = seconds > 0 ? bytes / 1e9 / seconds : 0;
        final double busBw = algBw * op.busBwFactor(ranks);
        Long wrong = null;
        for (int k = 0; k < options.check(); k++)
        {
            final long mine = check(c, layout, views, inPlace, ++checkSeed);
            if (mine != 0)
            {
                failedChecks++;
            }
            final long[] sum = {mine};
            comm.allReduce(sum, ReduceOp.SUM);
            wrong = sum[0];
            if (sum[0] != 0)
            {
                break;
            }
        }
        return new Measurement(seconds * 1e6, algBw, busBw, wrong, operations);
    }

    /**
     * Runs batches of untimed operations until their time settles ({@link Settling}); every rank decides from the same
     * combined figures, so all stop together.
     *
     * @return the last batch's time per operation, the slowest rank's.
     */
    private double settle(final BenchCase c, final Views views, final SizeLayout layout)
    {
        final Settling settling = new Settling();
        int batch = 1;
        while (true)
        {
            final JitActivity.Reading jitBefore = JitActivity.read();
            final long start = System.nanoTime();
            for (int i = 0; i < batch; i++)
            {
                issue(c, views, layout);
            }
            joinPending();
            final double[] slowest = slowest((System.nanoTime() - start) / 1e9 / batch,
                jitBefore.workUntil(JitActivity.read()));
            if (settling.settled(slowest[0], batch, slowest[1] > Settling.JIT_QUIET_NANOS))
            {
                return slowest[0];
            }
            batch = settling.nextBatch(slowest[0]);
        }
    }

    /** The largest of each of the ranks' values, the same on every rank. */
    private double[] slowest(final double... values)
    {
        comm.allReduce(values, ReduceOp.MAX);
        return values;
    }

    /**
     * Combines this rank's seconds per operation with the other ranks', as {@code -a} says. Rank 0's value is
     * broadcast for {@code -a 0}, so that every rank reaches the same verdicts.
     */
    private double aggregate(final double seconds)
    {
        final double[] value = {seconds};
        switch (options.average())
        {
            case 0 -> comm.broadcast(value, 0);
            case 1 ->
            {
                comm.allReduce(value, ReduceOp.SUM);
                value[0] /= ranks;
            }
            case 2 -> comm.allReduce(value, ReduceOp.MIN);
            default -> comm.allReduce(value, ReduceOp.MAX);
        }
        return value[0];
    }

    private void issue(final BenchCase c, final Views v, final SizeLayout layout)
    {
        if (options.blocking())
        {
            runBlocking(c, v, layout);
            return;
        }
        final long count = layout.paramCount();
        final DataType type = c.type();
        switch (op)
        {
            case ALL_REDUCE -> pending.add(comm.allReduceAsync(v.send, v.recv, count, type, c.op()));
            case ALL_GATHER -> pending.add(comm.allGatherAsync(v.send, v.recv, count, type));
            case REDUCE_SCATTER -> pending.add(comm.reduceScatterAsync(v.send, v.recv, count, type, c.op()));
            case BROADCAST -> pending.add(comm.broadcastAsync(v.send, count, type, c.root()));
            case REDUCE -> pending.add(comm.reduceAsync(v.send, v.recv, count, type, c.op(), c.root()));
            case ALLTOALL -> pending.add(comm.allToAllAsync(v.send, v.recv, count, type));
            case SENDRECV ->
            {
                // The stream runs them in issue order, so in place the send has left before the receive lands.
                pending.add(comm.sendAsync(v.send, count, type, (rank + 1) % ranks));
                pending.add(comm.recvAsync(v.recv, count, type, (rank + ranks - 1) % ranks));
            }
            case BARRIER -> pending.add(comm.barrierAsync());
        }
    }

    /** {@code -z 1}: the same operations as blocking calls, each run on this thread. */
    private void runBlocking(final BenchCase c, final Views v, final SizeLayout layout)
    {
        final long count = layout.paramCount();
        final DataType type = c.type();
        switch (op)
        {
            case ALL_REDUCE -> comm.allReduce(v.send, v.recv, count, type, c.op());
            case ALL_GATHER -> comm.allGather(v.send, v.recv, count, type);
            case REDUCE_SCATTER -> comm.reduceScatter(v.send, v.recv, count, type, c.op());
            case BROADCAST -> comm.broadcast(v.send, count, type, c.root());
            case REDUCE -> comm.reduce(v.send, v.recv, count, type, c.op(), c.root());
            case ALLTOALL -> comm.allToAll(v.send, v.recv, count, type);
            case SENDRECV ->
            {
                // A send above the receiver's eager budget completes only once its receive is posted (rendezvous,
                // as MPI_Send), so a ring where every rank sends first would wait forever. Even ranks send first and
                // odd ranks receive first: every send meets a receive, for an odd ring too (its last rank, even,
                // sends to rank 0, which receives once its own send to rank 1 is done). In place, an odd rank's
                // receive would overwrite what it is to send, so it sends a copy, as MPI_Sendrecv_replace does.
                final int next = (rank + 1) % ranks;
                final int previous = (rank + ranks - 1) % ranks;
                if (rank % 2 == 0)
                {
                    comm.send(v.send, count, type, next);
                    comm.recv(v.recv, count, type, previous);
                }
                else
                {
                    final ByteBuffer outgoing = v.send != v.recv ? v.send :
                        view(sendBuffer, 0, count, c.elementSize()).put(0, v.send, 0, v.send.remaining());
                    comm.recv(v.recv, count, type, previous);
                    comm.send(outgoing, count, type, next);
                }
            }
            case BARRIER -> comm.barrier();
        }
    }

    private void joinPending()
    {
        try
        {
            // Last first: the stream runs operations in issue order, so this thread sleeps once for the batch
            // instead of waking for each completion and taking a core from the stream that runs them.
            for (int i = pending.size() - 1; i >= 0; i--)
            {
                pending.get(i).join();
            }
        }
        finally
        {
            pending.clear();
        }
    }

    /**
     * One run with fresh inputs (and poisoned outputs), then this rank's wrong elements.
     */
    private long check(
        final BenchCase c, final SizeLayout layout, final Views v, final boolean inPlace, final long seed)
    {
        final DataType type = c.type();
        final ReduceOp reduceOp = c.op();
        final int count = (int)layout.paramCount();
        final int n = ranks;
        switch (op)
        {
            case ALL_REDUCE:
                BenchData.fill(v.send, seed, rank, 0, count, type, reduceOp);
                poisonUnlessInPlace(v.recv, inPlace);
                runOnce(c, v, layout);
                return BenchData.countWrong(v.recv, count, type, i -> Reference.reduced(seed, n, i, type, reduceOp));
            case ALL_GATHER:
                // In place the send block lies inside recv: poison first, then write this rank's block.
                BenchData.poison(v.recv);
                BenchData.fill(v.send, seed, rank, 0, count, type, null);
                runOnce(c, v, layout);
                return BenchData.countWrong(v.recv, count * n, type,
                    i -> Reference.input(seed, (int)(i / count), i % count, type, null));
            case REDUCE_SCATTER:
                BenchData.fill(v.send, seed, rank, 0, count * n, type, reduceOp);
                poisonUnlessInPlace(v.recv, inPlace);
                runOnce(c, v, layout);
                return BenchData.countWrong(v.recv, count, type,
                    i -> Reference.reduced(seed, n, (long)rank * count + i, type, reduceOp));
            case BROADCAST:
                if (rank == c.root())
                {
                    BenchData.fill(v.send, seed, rank, 0, count, type, null);
                }
                else
                {
                    BenchData.poison(v.send);
                }
                runOnce(c, v, layout);
                return BenchData.countWrong(v.send, count, type, i -> Reference.input(seed, c.root(), i, type, null));
            case REDUCE:
                BenchData.fill(v.send, seed, rank, 0, count, type, reduceOp);
                poisonUnlessInPlace(v.recv, inPlace);
                runOnce(c, v, layout);
                // Only the root has a result; elsewhere the receive buffer is not the operation's to write.
                return rank != c.root() ? 0 :
                    BenchData.countWrong(v.recv, count, type, i -> Reference.reduced(seed, n, i, type, reduceOp));
            case ALLTOALL:
                BenchData.fill(v.send, seed, rank, 0, count * n, type, null);
                poisonUnlessInPlace(v.recv, inPlace);
                runOnce(c, v, layout);
                // Block j of the result is block `rank` of rank j's input.
                return BenchData.countWrong(v.recv, count * n, type,
                    i -> Reference.input(seed, (int)(i / count), (long)rank * count + i % count, type, null));
            case SENDRECV:
                BenchData.fill(v.send, seed, rank, 0, count, type, null);
                poisonUnlessInPlace(v.recv, inPlace);
                runOnce(c, v, layout);
                final int from = (rank + n - 1) % n;
                return BenchData.countWrong(v.recv, count, type, i -> Reference.input(seed, from, i, type, null));
            case BARRIER:
            default:
                runOnce(c, v, layout);
                return 0;
        }
    }

    private void runOnce(final BenchCase c, final Views v, final SizeLayout layout)
    {
        issue(c, v, layout);
        joinPending();
    }

    private static void poisonUnlessInPlace(final ByteBuffer recv, final boolean inPlace)
    {
        if (!inPlace)
        {
            BenchData.poison(recv);
        }
    }

    /**
     * The buffers an operation takes, as nccl-tests' {@code startColl} offsets them.
     */
    private Views views(final BenchCase c, final SizeLayout layout, final boolean inPlace)
    {
        final int e = c.elementSize();
        if (op == BenchOp.BROADCAST)
        {
            final ByteBuffer buf = !inPlace && rank == c.root() ? view(sendBuffer, 0, layout.sendCount(), e) :
                view(recvBuffer, 0, layout.recvCount(), e);
            return new Views(buf, buf);
        }
        if (!inPlace)
        {
            return new Views(view(sendBuffer, 0, layout.sendCount(), e), view(recvBuffer, 0, layout.recvCount(), e));
        }
        final ByteBuffer recv = view(recvBuffer, layout.recvInPlaceOffset() * rank, layout.recvCount(), e);
        if (layout.sendInPlaceOffset() == layout.recvInPlaceOffset() && layout.sendCount() == layout.recvCount())
        {
            return new Views(recv, recv);
        }
        return new Views(view(recvBuffer, layout.sendInPlaceOffset() * rank, layout.sendCount(), e), recv);
    }

    private static ByteBuffer view(final ByteBuffer buf, final long first, final long count, final int elementSize)
    {
        return buf.slice((int)(first * elementSize), (int)(count * elementSize)).order(ByteOrder.nativeOrder());
    }

    private record Views(ByteBuffer send, ByteBuffer recv)
    {
    }
}
