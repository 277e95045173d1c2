package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A rank that runs the node arena's collectives on ordinary buffers (direct ones, slices of them at odd addresses,
 * and on odd ranks a heap buffer now and then), at sizes the arena posts in place, back to back, and checks every
 * result against its reference: prints {@code CHECKED <n>} and exits 0, or {@code WRONG} with what differed and
 * exits 2. Every value is a small integer, so every sum is exact in FP32.
 */
public final class OrdinaryBuffersWorker
{
    /** Several of the arena's pieces; 1.2 MB. */
    private static final int LARGE = 300_000;
    /** Just above the size from which the arena posts in place, and not a whole number of cache lines. */
    private static final int ODD = 16_411;

    private static int checked;

    private OrdinaryBuffersWorker()
    {
    }

    /**
     * Runs the checks.
     *
     * @param args unused.
     */
    public static void main(final String[] args)
    {
        try (Communicator comm = Hccl.init())
        {
            for (int round = 0; round < 3; round++)
            {
                for (final int count : new int[] {LARGE, ODD})
                {
                    allReduce(comm, count, false, round);
                    allReduce(comm, count, true, round);
                    reduce(comm, count, round);
                    reduceScatter(comm, count / comm.worldSize() + 1, round);
                    allGather(comm, count / comm.worldSize() + 3, round);
                    broadcast(comm, count, round);
                }
            }
            System.out.println("CHECKED " + checked);
        }
        catch (final RuntimeException | AssertionError ex)
        {
            System.out.println("WRONG " + ex);
            System.out.flush();
            System.exit(2);
        }
    }

    /** Rank {@code r}'s element {@code i}: a small integer that differs by rank, element and round. */
    private static float value(final int rank, final int i, final int round)
    {
        return (rank + 1) * (i % 61 + 1) + round;
    }

    /** A direct buffer's slice that starts 4 bytes into a page, or a heap buffer where {@code heap}. */
    private static ByteBuffer buffer(final int floats, final boolean heap)
    {
        if (heap)
        {
            return ByteBuffer.allocate(floats * Float.BYTES).order(ByteOrder.nativeOrder());
        }
        return ByteBuffer.allocateDirect(floats * Float.BYTES + 8).order(ByteOrder.nativeOrder()).position(4)
            .slice().order(ByteOrder.nativeOrder()).limit(floats * Float.BYTES);
    }

    private static ByteBuffer filled(final Communicator comm, final int floats, final int round, final boolean heap)
    {
        final ByteBuffer b = buffer(floats, heap);
        for (int i = 0; i < floats; i++)
        {
            b.putFloat(i * Float.BYTES, value(comm.rank(), i, round));
        }
        return b;
    }

    private static float sum(final int n, final int i, final int round)
    {
        float s = 0;
        for (int r = 0; r < n; r++)
        {
            s += value(r, i, round);
        }
        return s;
    }

    private static boolean heapThisTime(final Communicator comm, final int round)
    {
        return comm.rank() % 2 == 1 && round == 1;
    }

    private static void allReduce(final Communicator comm, final int count, final boolean inPlace, final int round)
    {
        final ByteBuffer send = filled(comm, count, round, heapThisTime(comm, round));
        final ByteBuffer recv = inPlace ? send : buffer(count, false);
        comm.allReduce(send, recv, count, DataType.FP32, ReduceOp.SUM);
        for (int i = 0; i < count; i++)
        {
            expect("allReduce" + (inPlace ? " in place" : ""), count, i, sum(comm.worldSize(), i, round),
                recv.getFloat(i * Float.BYTES));
        }
    }

    private static void reduce(final Communicator comm, final int count, final int round)
    {
        final int root = comm.worldSize() - 1;
        final ByteBuffer send = filled(comm, count, round, false);
        final ByteBuffer recv = buffer(count, heapThisTime(comm, round));
        comm.reduce(send, recv, count, DataType.FP32, ReduceOp.SUM, root);
        for (int i = 0; i < count && comm.rank() == root; i++)
        {
            expect("reduce", count, i, sum(comm.worldSize(), i, round), recv.getFloat(i * Float.BYTES));
        }
    }

    private static void reduceScatter(final Communicator comm, final int block, final int round)
    {
        final int n = comm.worldSize();
        final ByteBuffer send = filled(comm, block * n, round, heapThisTime(comm, round));
        final ByteBuffer recv = buffer(block, false);
        comm.reduceScatter(send, recv, block, DataType.FP32, ReduceOp.SUM);
        for (int i = 0; i < block; i++)
        {
            expect("reduceScatter", block, i, sum(n, comm.rank() * block + i, round), recv.getFloat(i * Float.BYTES));
        }
    }

    private static void allGather(final Communicator comm, final int block, final int round)
    {
        final int n = comm.worldSize();
        final ByteBuffer send = filled(comm, block, round, false);
        final ByteBuffer recv = buffer(block * n, heapThisTime(comm, round));
        comm.allGather(send, recv, block, DataType.FP32);
        for (int r = 0; r < n; r++)
        {
            for (int i = 0; i < block; i++)
            {
                expect("allGather", block, r * block + i, value(r, i, round),
                    recv.getFloat((r * block + i) * Float.BYTES));
            }
        }
    }

    private static void broadcast(final Communicator comm, final int count, final int round)
    {
        final int root = (round + 1) % comm.worldSize();
        final ByteBuffer buf = comm.rank() == root ? filled(comm, count, round, false) :
            buffer(count, heapThisTime(comm, round));
        comm.broadcast(buf, count, DataType.FP32, root);
        for (int i = 0; i < count; i++)
        {
            expect("broadcast", count, i, value(root, i, round), buf.getFloat(i * Float.BYTES));
        }
    }

    private static void expect(final String op, final int count, final int i, final float expected, final float got)
    {
        if (expected != got)
        {
            throw new AssertionError(op + " of " + count + " elements: element " + i + " is " + got + ", not " +
                expected);
        }
        checked++;
    }
}
