package dev.hccl.bench.check;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs one {@link CheckCase} on a communicator and checks this rank's result against {@link Reference}. Every rank
 * of the communicator must run the same case at the same time. Since every rank checks its own bits against the same
 * reference, a passing run also proves that every rank holds the same bits.
 */
public final class CollectiveCheck
{
    private static final int MAX_REPORTED = 5;
    /** What a receive buffer holds before the operation, so that an element it never wrote shows. */
    private static final byte[] POISON = poison();

    private CollectiveCheck()
    {
    }

    /**
     * The cases of a matrix: every operation, and for each every data type, every reduction that applies, every
     * count, in place and out of place.
     *
     * @param worldSize the communicator's size (roots cycle through its ranks).
     * @param counts    the counts.
     * @param types     the types.
     * @param ops       the reductions.
     * @return the cases, in a fixed order.
     */
    public static List<CheckCase> matrix(
        final int worldSize, final int[] counts, final DataType[] types, final ReduceOp[] ops)
    {
        final List<CheckCase> cases = new ArrayList<>();
        int root = 0;
        for (final int count : counts)
        {
            for (final DataType type : types)
            {
                for (final boolean inPlace : new boolean[]{false, true})
                {
                    for (final ReduceOp op : ops)
                    {
                        if (op == ReduceOp.AVG && !type.isFloatingPoint())
                        {
                            continue;
                        }
                        cases.add(new CheckCase(Operation.ALL_REDUCE, type, op, count, inPlace, 0));
                        cases.add(new CheckCase(Operation.REDUCE_SCATTER, type, op, count, inPlace, 0));
                        cases.add(new CheckCase(Operation.REDUCE, type, op, count, inPlace, root++ % worldSize));
                    }
                    cases.add(new CheckCase(Operation.ALL_GATHER, type, null, count, inPlace, 0));
                    cases.add(new CheckCase(Operation.BROADCAST, type, null, count, inPlace, root++ % worldSize));
                    cases.add(new CheckCase(Operation.ALL_TO_ALL, type, null, count, inPlace, 0));
                    if (!inPlace)
                    {
                        cases.add(new CheckCase(Operation.SEND, type, null, count, false, 0));
                    }
                }
            }
        }
        return cases;
    }

    /**
     * Runs a case and checks the result.
     *
     * @param comm the communicator.
     * @param c    the case.
     * @param seed varies the inputs; the same on every rank.
     * @return null when this rank's result is right, else what is wrong.
     */
    public static String run(final Communicator comm, final CheckCase c, final long seed)
    {
        return run(comm, c, seed, null);
    }

    /**
     * Runs a case and checks the result, the expected all-reduce results taken from a table the ranks of this JVM
     * share.
     *
     * @param comm   the communicator.
     * @param c      the case.
     * @param seed   varies the inputs; the same on every rank.
     * @param shared the table of the communicator's ranks in this JVM, or null to compute this rank's own.
     * @return null when this rank's result is right, else what is wrong.
     */
    public static String run(final Communicator comm, final CheckCase c, final long seed, final SharedReference shared)
    {
        final int n = comm.worldSize();
        final int rank = comm.rank();
        final DataType type = c.type();
        final int count = c.count();
        switch (c.operation())
        {
            case ALL_REDUCE:
            {
                final ByteBuffer send = filled(seed, rank, count, type, c.reduceOp());
                final ByteBuffer recv = c.inPlace() ? send : poisoned(count, type);
                final Sent sent = c.inPlace() ? null : new Sent(send);
                comm.allReduce(send, recv, count, type, c.reduceOp());
                final long[] table = shared == null ? null : shared.allReduced(c, seed);
                return compare(c, recv, count, table != null ? i -> table[(int)i] :
                    i -> Reference.reduced(seed, n, i, type, c.reduceOp()), sent, rank);
            }
            case REDUCE_SCATTER:
            {
                final ByteBuffer send = filled(seed, rank, (long)count * n, type, c.reduceOp());
                final ByteBuffer recv = c.inPlace() ? slice(send, rank * count, count, type) : poisoned(count, type);
                final Sent sent = c.inPlace() ? null : new Sent(send);
                comm.reduceScatter(send, recv, count, type, c.reduceOp());
                return compare(c, recv, count,
                    i -> Reference.reduced(seed, n, (long)rank * count + i, type, c.reduceOp()), sent, rank);
            }
            case REDUCE:
            {
                final ByteBuffer send = filled(seed, rank, count, type, c.reduceOp());
                final ByteBuffer recv = c.inPlace() ? send : poisoned(count, type);
                final Sent sent = c.inPlace() ? null : new Sent(send);
                comm.reduce(send, rank == c.root() ? recv : (c.inPlace() ? send : null), count, type, c.reduceOp(),
                    c.root());
                if (rank != c.root())
                {
                    return sent == null ? null : sent.changed(c, count, rank);
                }
                return compare(c, recv, count, i -> Reference.reduced(seed, n, i, type, c.reduceOp()), sent, rank);
            }
            case ALL_GATHER:
            {
                final ByteBuffer recv = poisoned((long)count * n, type);
                final ByteBuffer send;
                if (c.inPlace())
                {
                    send = slice(recv, rank * count, count, type);
                    fill(send, seed, rank, 0, count, type, null);
                }
                else
                {
                    send = filled(seed, rank, count, type, null);
                }
                final Sent sent = c.inPlace() ? null : new Sent(send);
                comm.allGather(send, recv, count, type);
                return compare(c, recv, count * n, i -> Reference.input(seed, (int)(i / Math.max(1, count)),
                    i % Math.max(1, count), type, null), sent, rank);
            }
            case BROADCAST:
            {
                final ByteBuffer buf = rank == c.root() ? filled(seed, rank, count, type, null) : poisoned(count, type);
                comm.broadcast(buf, count, type, c.root());
                return compare(c, buf, count, i -> Reference.input(seed, c.root(), i, type, null), null, rank);
            }
            case ALL_TO_ALL:
            {
                final ByteBuffer send = filled(seed, rank, (long)count * n, type, null);
                final ByteBuffer recv = c.inPlace() ? send : poisoned((long)count * n, type);
                final Sent sent = c.inPlace() ? null : new Sent(send);
                comm.allToAll(send, recv, count, type);
                // Block j of the result is block `rank` of rank j's input.
                return compare(c, recv, count * n, i -> Reference.input(seed, (int)(i / Math.max(1, count)),
                    (long)rank * count + i % Math.max(1, count), type, null), sent, rank);
            }
            case SEND:
            {
                // A ring of sends and receives: each rank sends to the next and receives from the one before.
                final ByteBuffer send = filled(seed, rank, count, type, null);
                final ByteBuffer recv = poisoned(count, type);
                if (n == 1)
                {
                    return null;
                }
                final int to = (rank + 1) % n;
                final int from = (rank + n - 1) % n;
                final Sent sent = new Sent(send);
                comm.sendAsync(send, count, type, to);
                comm.recv(recv, count, type, from);
                return compare(c, recv, count, i -> Reference.input(seed, from, i, type, null), sent, rank);
            }
            default:
                throw new IllegalArgumentException("no check for " + c.operation());
        }
    }

    private interface Expected
    {
        long at(long index);
    }

    private static String compare(
        final CheckCase c, final ByteBuffer actual, final int count, final Expected expected, final Sent sent,
        final int rank)
    {
        final StringBuilder errors = new StringBuilder();
        int wrong = 0;
        for (int i = 0; i < count; i++)
        {
            final long want = expected.at(i);
            final long got = Reference.get(actual, i, c.type());
            if (want != got)
            {
                if (wrong++ < MAX_REPORTED)
                {
                    errors.append(" [").append(i).append("] expected ").append(Reference.show(c.type(), want))
                        .append(" got ").append(Reference.show(c.type(), got)).append(';');
                }
            }
        }
        if (wrong > 0)
        {
            return "rank " + rank + " " + c + ": " + wrong + " wrong element(s):" + errors;
        }
        return sent == null ? null : sent.changed(c, inputCount(c, count), rank);
    }

    private static int inputCount(final CheckCase c, final int resultCount)
    {
        return c.operation() == Operation.ALL_GATHER ? c.count() : c.operation() == Operation.REDUCE_SCATTER ?
            -1 : resultCount;
    }

    /**
     * Out of place, the send buffer must come back untouched: a copy taken before the operation, which the buffer
     * must still equal after it.
     */
    private static final class Sent
    {
        private final ByteBuffer buffer;
        private final ByteBuffer before;

        Sent(final ByteBuffer buffer)
        {
            this.buffer = buffer;
            this.before = ByteBuffer.allocate(buffer.capacity()).put(0, buffer, 0, buffer.capacity());
        }

        /**
         * What changed in the first {@code elements} elements, or null when nothing did.
         *
         * @param c        the case.
         * @param elements how many elements to compare; negative for the whole buffer.
         * @param rank     this rank.
         * @return the first changed element, or null.
         */
        String changed(final CheckCase c, final int elements, final int rank)
        {
            final int bytes = elements >= 0 ? elements * c.type().size() : buffer.capacity();
            final int at = buffer.slice(0, bytes).mismatch(before.slice(0, bytes));
            return at < 0 ? null : "rank " + rank + " " + c + ": the send buffer changed at element " +
                at / c.type().size();
        }
    }

    private static ByteBuffer filled(
        final long seed, final int rank, final long count, final DataType type, final ReduceOp op)
    {
        final ByteBuffer buf = allocate(count, type);
        fill(buf, seed, rank, 0, (int)count, type, op);
        return buf;
    }

    private static void fill(
        final ByteBuffer buf, final long seed, final int rank, final int first, final int count, final DataType type,
        final ReduceOp op)
    {
        for (int i = 0; i < count; i++)
        {
            Reference.put(buf, i, type, Reference.input(seed, rank, first + i, type, op));
        }
    }

    private static ByteBuffer poisoned(final long count, final DataType type)
    {
        final ByteBuffer buf = allocate(count, type);
        for (int at = 0; at < buf.capacity(); at += POISON.length)
        {
            buf.put(at, POISON, 0, Math.min(POISON.length, buf.capacity() - at));
        }
        return buf;
    }

    private static byte[] poison()
    {
        final byte[] bytes = new byte[4096];
        Arrays.fill(bytes, (byte)0x5A);
        return bytes;
    }

    private static ByteBuffer slice(final ByteBuffer buf, final int first, final int count, final DataType type)
    {
        return buf.slice(first * type.size(), count * type.size()).order(ByteOrder.nativeOrder());
    }

    private static ByteBuffer allocate(final long count, final DataType type)
    {
        return ByteBuffer.allocateDirect((int)(count * type.size())).order(ByteOrder.nativeOrder());
    }
}
