package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.bench.check.Reference;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Checks of allGatherV, reduceScatterV, allToAllV, scatter and gather against {@link Reference}, the way
 * {@code CollectiveCheck} checks the other collectives: each rank computes the layout of every rank from the same
 * arguments (uneven blocks, empty ones among them, placed last to first with gaps between them), runs the operation
 * and compares its own bits with the reference. Gaps of the output must come back untouched (poisoned), and out of
 * place the input must too.
 *
 * @param operation one of the five.
 * @param type      element type.
 * @param reduceOp  reduceScatterV's reduction, else null.
 * @param scale     the V blocks hold {@code scale} elements plus a few, or none; scatter and gather
 *                  {@code scale + 3}, or exactly {@code scale} when {@code exact}.
 * @param exact     scatter and gather blocks of exactly {@code scale} elements (0 included).
 * @param inPlace   the in-place form of the operation (allToAllV: send and recv the same memory).
 * @param root      scatter's and gather's root.
 */
record VariableCheck(
    Operation operation, DataType type, ReduceOp reduceOp, int scale, boolean exact, boolean inPlace, int root)
{
    private static final byte POISON = 0x5A;

    @Override
    public String toString()
    {
        return operation.displayName() + "(" + type + (reduceOp == null ? "" : ", " + reduceOp) + ", scale=" + scale +
            (inPlace ? ", in-place" : "") + (operation == Operation.SCATTER || operation == Operation.GATHER ?
            ", root=" + root : "") + ")";
    }

    /** Elements of block {@code b} of a layout: empty for one block in four, the salt moving which. */
    static int count(final int scale, final int b, final int salt)
    {
        return (b * 5 + salt) % 4 == 0 ? 0 : scale + (b * 3 + salt) % 7;
    }

    static int[] counts(final int n, final int scale, final int salt)
    {
        final int[] counts = new int[n];
        for (int b = 0; b < n; b++)
        {
            counts[b] = count(scale, b, salt);
        }
        return counts;
    }

    /** Blocks placed last to first, with a gap of {@code b % 2} elements after block {@code b}. */
    static long[] displs(final int[] counts)
    {
        final long[] displs = new long[counts.length];
        long next = 0;
        for (int b = counts.length - 1; b >= 0; b--)
        {
            displs[b] = next;
            next += counts[b] + b % 2;
        }
        return displs;
    }

    static long[] longs(final int[] values)
    {
        final long[] longs = new long[values.length];
        for (int i = 0; i < values.length; i++)
        {
            longs[i] = values[i];
        }
        return longs;
    }

    private static int extent(final int[] counts, final long[] displs)
    {
        long end = 0;
        for (int b = 0; b < counts.length; b++)
        {
            end = Math.max(end, displs[b] + counts[b]);
        }
        return (int)end;
    }

    /** Elements rank q sends rank j in allToAllV. */
    private int pairCount(final int q, final int j, final long seed)
    {
        return (q * 3 + j * 5 + (int)seed) % 4 == 0 ? 0 : scale + (q + 2 * j) % 5 + 1;
    }

    /**
     * Runs the check on this rank; every rank of the communicator must run it at the same time.
     *
     * @param comm the communicator.
     * @param seed varies the inputs and the layouts; the same on every rank.
     * @return null when right, else what is wrong.
     */
    String run(final Communicator comm, final long seed)
    {
        switch (operation)
        {
            case ALL_GATHER_V:
                return allGatherV(comm, seed);
            case REDUCE_SCATTER_V:
                return reduceScatterV(comm, seed);
            case ALL_TO_ALL_V:
                return allToAllV(comm, seed);
            case SCATTER:
                return scatter(comm, seed);
            case GATHER:
                return gather(comm, seed);
            default:
                throw new IllegalArgumentException("no check for " + operation);
        }
    }

    private String allGatherV(final Communicator comm, final long seed)
    {
        final int n = comm.worldSize();
        final int rank = comm.rank();
        final int[] counts = counts(n, scale, (int)seed);
        final long[] displs = displs(counts);
        final ByteBuffer recv = poisoned(extent(counts, displs));
        final ByteBuffer send = inPlace ? slice(recv, (int)displs[rank], counts[rank]) : allocate(counts[rank]);
        fill(send, seed, rank, counts[rank], null);
        comm.allGatherV(send, counts[rank], recv, longs(counts), displs, type);
        final String wrong = compareBlocks(recv, counts, displs, (b, i) -> Reference.input(seed, b, i, type, null),
            true);
        return wrong != null ? wrong : inPlace ? null : unchanged(send, seed, rank, counts[rank], null);
    }

    private String reduceScatterV(final Communicator comm, final long seed)
    {
        final int n = comm.worldSize();
        final int rank = comm.rank();
        final int[] counts = counts(n, scale, (int)seed);
        final long[] displs = displs(counts);
        final int extent = extent(counts, displs);
        final ByteBuffer send = allocate(extent);
        fill(send, seed, rank, extent, reduceOp);
        final ByteBuffer recv = inPlace ? slice(send, (int)displs[rank], counts[rank]) : poisoned(counts[rank]);
        comm.reduceScatterV(send, longs(counts), displs, recv, counts[rank], type, reduceOp);
        for (int i = 0; i < counts[rank]; i++)
        {
            final long index = displs[rank] + i;
            final long want = Reference.reduced(seed, n, index, type, reduceOp);
            final long got = Reference.get(recv, i, type);
            if (got != want)
            {
                return wrong(comm, "element " + i + " expected " + Reference.show(type, want) + " got " +
                    Reference.show(type, got));
            }
        }
        return inPlace ? null : unchanged(send, seed, rank, extent, reduceOp);
    }

    private String allToAllV(final Communicator comm, final long seed)
    {
        final int n = comm.worldSize();
        final int rank = comm.rank();
        final int[] sendCounts = new int[n];
        final int[] recvCounts = new int[n];
        for (int j = 0; j < n; j++)
        {
            sendCounts[j] = pairCount(rank, j, seed);
            recvCounts[j] = pairCount(j, rank, seed);
        }
        final long[] sendDispls = displs(sendCounts);
        final long[] recvDispls = displs(recvCounts);
        final int sendExtent = extent(sendCounts, sendDispls);
        final int recvExtent = extent(recvCounts, recvDispls);
        final ByteBuffer send = inPlace ? poisoned(Math.max(sendExtent, recvExtent)) : allocate(sendExtent);
        fill(send, seed, rank, sendExtent, null);
        final ByteBuffer recv = inPlace ? send : poisoned(recvExtent);
        comm.allToAllV(send, longs(sendCounts), sendDispls, recv, longs(recvCounts), recvDispls, type);
        final String wrong = compareBlocks(recv, recvCounts, recvDispls, (q, i) ->
        {
            final int[] theirs = new int[n];
            for (int j = 0; j < n; j++)
            {
                theirs[j] = pairCount(q, j, seed);
            }
            return Reference.input(seed, q, displs(theirs)[rank] + i, type, null);
        }, !inPlace);
        return wrong != null ? wrong : inPlace ? null : unchanged(send, seed, rank, sendExtent, null);
    }

    private int blockCount()
    {
        return exact ? scale : scale + 3;
    }

    private String scatter(final Communicator comm, final long seed)
    {
        final int n = comm.worldSize();
        final int rank = comm.rank();
        final int count = blockCount();
        ByteBuffer send = null;
        if (rank == root)
        {
            send = allocate(n * count);
            fill(send, seed, root, n * count, null);
        }
        final ByteBuffer recv = inPlace && rank == root ? slice(send, root * count, count) : poisoned(count);
        comm.scatter(send, recv, count, type, root);
        for (int i = 0; i < count; i++)
        {
            final long want = Reference.input(seed, root, (long)rank * count + i, type, null);
            final long got = Reference.get(recv, i, type);
            if (got != want)
            {
                return wrong(comm, "element " + i + " expected " + Reference.show(type, want) + " got " +
                    Reference.show(type, got));
            }
        }
        return rank != root || inPlace ? null : unchanged(send, seed, root, n * count, null);
    }

    private String gather(final Communicator comm, final long seed)
    {
        final int n = comm.worldSize();
        final int rank = comm.rank();
        final int count = blockCount();
        final ByteBuffer recv = rank == root ? poisoned(n * count) : null;
        final ByteBuffer send = inPlace && rank == root ? slice(recv, root * count, count) : allocate(count);
        fill(send, seed, rank, count, null);
        comm.gather(send, recv, count, type, root);
        if (rank == root)
        {
            for (int i = 0; i < n * count; i++)
            {
                final long want = Reference.input(seed, i / count, i % count, type, null);
                final long got = Reference.get(recv, i, type);
                if (got != want)
                {
                    return wrong(comm, "element " + i + " expected " + Reference.show(type, want) + " got " +
                        Reference.show(type, got));
                }
            }
        }
        return rank == root && inPlace ? null : unchanged(send, seed, rank, count, null);
    }

    private interface Expected
    {
        long at(int block, long index);
    }

    /** Each block's elements as expected, and (when {@code gaps}) every element outside the blocks still poisoned. */
    private String compareBlocks(
        final ByteBuffer actual, final int[] counts, final long[] displs, final Expected expected, final boolean gaps)
    {
        final long poison = Reference.get(poisoned(1), 0, type);
        final int extent = extent(counts, displs);
        final int[] blockAt = new int[extent];
        java.util.Arrays.fill(blockAt, -1);
        for (int b = 0; b < counts.length; b++)
        {
            for (int i = 0; i < counts[b]; i++)
            {
                blockAt[(int)displs[b] + i] = b;
            }
        }
        for (int i = 0; i < extent; i++)
        {
            final int b = blockAt[i];
            if (b < 0 && !gaps)
            {
                continue;
            }
            final long want = b < 0 ? poison : expected.at(b, i - displs[b]);
            final long got = Reference.get(actual, i, type);
            if (got != want)
            {
                return "element " + i + (b < 0 ? " (a gap)" : " (block " + b + ")") + " expected " +
                    Reference.show(type, want) + " got " + Reference.show(type, got) + " in " + this;
            }
        }
        return null;
    }

    private String unchanged(
        final ByteBuffer input, final long seed, final int rank, final int count, final ReduceOp op)
    {
        for (int i = 0; i < count; i++)
        {
            if (Reference.get(input, i, type) != Reference.input(seed, rank, i, type, op))
            {
                return "rank " + rank + " " + this + ": the send buffer changed at element " + i;
            }
        }
        return null;
    }

    private String wrong(final Communicator comm, final String what)
    {
        return "rank " + comm.rank() + " " + this + ": " + what;
    }

    private void fill(final ByteBuffer buf, final long seed, final int rank, final int count, final ReduceOp op)
    {
        for (int i = 0; i < count; i++)
        {
            Reference.put(buf, i, type, Reference.input(seed, rank, i, type, op));
        }
    }

    private ByteBuffer allocate(final int count)
    {
        return ByteBuffer.allocateDirect(count * type.size()).order(ByteOrder.nativeOrder());
    }

    private ByteBuffer poisoned(final int count)
    {
        final ByteBuffer buf = allocate(count);
        for (int i = 0; i < buf.capacity(); i++)
        {
            buf.put(i, POISON);
        }
        return buf;
    }

    private ByteBuffer slice(final ByteBuffer buf, final int first, final int count)
    {
        return buf.slice(first * type.size(), count * type.size()).order(ByteOrder.nativeOrder());
    }
}
