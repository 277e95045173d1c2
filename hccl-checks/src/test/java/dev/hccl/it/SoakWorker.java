package dev.hccl.it;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * A soak: for {@code args[0]} seconds every rank draws the same random operations from one seed (all-reduce,
 * all-gather, reduce-scatter, broadcast, all-to-all, a ring of send and receive, barrier) with random sizes and types,
 * on values every rank can compute, and checks every element it receives. Prints {@code SOAK-OK <iterations>}, or
 * {@code FAILED} and exits 3.
 */
public final class SoakWorker
{
    private static final int MAX_COUNT = 300_000;

    private SoakWorker()
    {
    }

    /**
     * @param args seconds to run, then the seed.
     */
    public static void main(final String[] args)
    {
        final long seconds = Long.parseLong(args[0]);
        final Random random = new Random(Long.parseLong(args[1]));
        try (Communicator comm = Hccl.init())
        {
            final int n = comm.worldSize();
            final int rank = comm.rank();
            final ByteBuffer a = ByteBuffer.allocateDirect(4 * MAX_COUNT * n).order(ByteOrder.nativeOrder());
            final ByteBuffer b = ByteBuffer.allocateDirect(4 * MAX_COUNT * n).order(ByteOrder.nativeOrder());
            final long end = System.nanoTime() + seconds * 1_000_000_000L;
            long iterations = 0;
            // Every rank draws the same sequence; the end is agreed by an all-reduce of "time is up".
            final int[] stop = new int[1];
            while (stop[0] == 0)
            {
                final int count = random.nextInt(4) == 0 ? random.nextInt(8) : 1 + random.nextInt(MAX_COUNT);
                final boolean ints = random.nextBoolean();
                final DataType type = ints ? DataType.INT32 : DataType.FP32;
                final int kind = random.nextInt(7);
                final int root = random.nextInt(n);
                final long it = iterations;
                switch (kind)
                {
                    case 0 ->
                    {
                        fill(a, count, type, i -> value(rank, it, i));
                        comm.allReduce(a, b, count, type, ReduceOp.SUM);
                        check(b, count, type, i ->
                        {
                            long s = 0;
                            for (int r = 0; r < n; r++)
                            {
                                s += value(r, it, i);
                            }
                            return s;
                        }, "allReduce", it);
                    }
                    case 1 ->
                    {
                        fill(a, count, type, i -> value(rank, it, i));
                        comm.allGather(a, b, count, type);
                        check(b, count * n, type, i -> value(i / count, it, i % count), "allGather", it);
                    }
                    case 2 ->
                    {
                        fill(a, count * n, type, i -> value(rank, it, i));
                        comm.reduceScatter(a, b, count, type, ReduceOp.MAX);
                        check(b, count, type, i ->
                        {
                            long m = Long.MIN_VALUE;
                            for (int r = 0; r < n; r++)
                            {
                                m = Math.max(m, value(r, it, rank * count + i));
                            }
                            return m;
                        }, "reduceScatter", it);
                    }
                    case 3 ->
                    {
                        fill(a, count, type, i -> rank == root ? value(root, it, i) : -1);
                        comm.broadcast(a, count, type, root);
                        check(a, count, type, i -> value(root, it, i), "broadcast", it);
                    }
                    case 4 ->
                    {
                        final int per = Math.max(1, count / n);
                        fill(a, per * n, type, i -> value(rank, it, i));
                        comm.allToAll(a, b, per, type);
                        check(b, per * n, type, i -> value(i / per, it, rank * per + i % per), "allToAll", it);
                    }
                    case 5 ->
                    {
                        fill(a, count, type, i -> value(rank, it, i));
                        final CommFuture recv = comm.recvAsync(b, count, type, (rank + n - 1) % n);
                        final CommFuture send = comm.sendAsync(a, count, type, (rank + 1) % n);
                        send.join();
                        recv.join();
                        check(b, count, type, i -> value((rank + n - 1) % n, it, i), "sendrecv", it);
                    }
                    default -> comm.barrier();
                }
                iterations++;
                stop[0] = System.nanoTime() > end ? 1 : 0;
                comm.allReduce(stop, ReduceOp.MAX);
            }
            System.out.println("SOAK-OK " + iterations);
        }
        catch (final Throwable t)
        {
            System.out.println("FAILED " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(3);
        }
    }

    /** A small integer every rank can compute, exact in FP32 and in sums of a few ranks. */
    private static long value(final int rank, final long iteration, final int index)
    {
        return ((rank * 7919L + iteration * 104729L + index * 31L) % 2001) - 1000;
    }

    private static void fill(final ByteBuffer buf, final int count, final DataType type,
        final java.util.function.IntToLongFunction f)
    {
        for (int i = 0; i < count; i++)
        {
            if (type == DataType.INT32)
            {
                buf.putInt(4 * i, (int)f.applyAsLong(i));
            }
            else
            {
                buf.putFloat(4 * i, f.applyAsLong(i));
            }
        }
    }

    private static void check(final ByteBuffer buf, final int count, final DataType type,
        final java.util.function.IntToLongFunction expected, final String what, final long iteration)
    {
        for (int i = 0; i < count; i++)
        {
            final long want = expected.applyAsLong(i);
            final double got = type == DataType.INT32 ? buf.getInt(4 * i) : buf.getFloat(4 * i);
            if (got != want)
            {
                throw new IllegalStateException(what + " (" + type + ", count " + count + ") at iteration " +
                    iteration + ": element " + i + " = " + got + ", expected " + want);
            }
        }
    }
}
