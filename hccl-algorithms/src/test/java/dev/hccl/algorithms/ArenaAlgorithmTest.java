package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The arena's protocol under operations issued back to back with no barrier between them, every rank pausing at
 * random, between operations and (without checksums) after signals it awaited, before reading what they published:
 * double buffering, and the notes of how far each rank has come that spare a look at its DONE signal, must keep a
 * rank that runs ahead from overwriting a half that a slower one still reads,
 * across operations of every kind and of one, several and many steps. {@link AlgorithmMatrixTest} checks each
 * operation against the reference one case at a time.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ArenaAlgorithmTest
{
    private static final ArenaAlgorithm ARENA = new ArenaAlgorithm();
    private static final Reducer SUM = Reducers.of(DataType.INT32, ReduceOp.SUM);
    private static final int OPERATIONS = 300;
    /** Elements of up to several steps of {@link LocalGroups#ARENA_REGION_BYTES}' halves. */
    private static final int MAX_COUNT = 12_000;
    /** Elements of up to 160 KB: most large operations are above the in-place size. */
    private static final int LARGE_COUNT = 40_000;

    private enum Kind
    {
        ALL_REDUCE, REDUCE, REDUCE_SCATTER, ALL_GATHER, BROADCAST, BARRIER
    }

    private record Op(Kind kind, int count, int root)
    {
    }

    @Test
    void backToBackOperationsOfEveryKindMatchTheReference() throws Exception
    {
        backToBack(false);
    }

    /**
     * Under {@code HCCL_CHECKSUM}, each reader checks exactly the bytes it reads against what their writer covered,
     * every kind of operation, in halves and in place: a CRC taken over other bytes than are read, or too late, fails
     * here as corruption where nothing is corrupted.
     */
    @Test
    void backToBackOperationsUnderChecksumsMatchTheReference() throws Exception
    {
        backToBack(true);
    }

    private static void backToBack(final boolean checksummed) throws Exception
    {
        for (final int n : new int[] { 2, 3, 5 })
        {
            final List<Op> ops = script(n, 7L * n);
            try (LocalGroups groups = checksummed ? new LocalGroups(n, 4096, null).checksummed() :
                new LocalGroups(n, 4096, null).pausingAfterSignals())
            {
                final List<String> failures = groups.run(group -> runScript(group, ops, 1000L + group.rank(),
                    null, null));
                for (int r = 0; r < n; r++)
                {
                    assertNull(failures.get(r), "n=" + n + " rank " + r);
                }
            }
        }
    }

    @Test
    void registeredBuffersAreReadInPlaceAndFreeForTheApplicationOnReturn() throws Exception
    {
        // Large operations, most above the size from which registered buffers are read in place; every rank writes
        // over its buffers as soon as an operation returns, so a rank that returned while another still read them
        // would show as a wrong result there. With three ranks, rank 1's buffers are ordinary: the others read its
        // data in its half, and it theirs where they lie. Under HCCL_CHECKSUM too, whose CRCs cover the data where
        // it lies.
        for (final boolean checksummed : new boolean[] { false, true })
        {
            for (final int n : new int[] { 2, 3 })
            {
                inPlaceScript(n, checksummed);
            }
        }
    }

    private static void inPlaceScript(final int n, final boolean checksummed) throws Exception
    {
        final List<Op> ops = script(n, 11L * n, 100, LARGE_COUNT);
        try (LocalGroups groups = checksummed ? new LocalGroups(n, 4096, null).checksummed() :
            new LocalGroups(n, 4096, null).pausingAfterSignals())
        {
            final int poolBytes = n * LARGE_COUNT * Integer.BYTES;
            final ByteBuffer[] sends = groups.register(poolBytes);
            final ByteBuffer[] recvs = groups.register(poolBytes);
            final List<String> failures = groups.run(group ->
            {
                final boolean registered = n == 2 || group.rank() != 1;
                return runScript(group, ops, 2000L + group.rank(),
                    registered ? sends[group.rank()] : ByteBuffer.allocateDirect(poolBytes)
                        .order(ByteOrder.nativeOrder()),
                    registered ? recvs[group.rank()] : ByteBuffer.allocateDirect(poolBytes)
                        .order(ByteOrder.nativeOrder()));
            });
            for (int r = 0; r < n; r++)
            {
                assertNull(failures.get(r), "n=" + n + " rank " + r + (checksummed ? ", checksummed" : ""));
            }
        }
    }

    @Test
    void aGroupWithoutAnArenaPassesMessagesInstead() throws Exception
    {
        // Two nodes: each node's arena holds half the group, so the ring runs (the matrix checks its results).
        try (LocalGroups groups = new LocalGroups(new int[] { 0, 0, 1, 1 }, 4096, null))
        {
            final List<Integer> crossings = groups.run(group ->
            {
                assertEquals(2, group.arena().members());
                assertNull(ArenaAlgorithm.spanning(group));
                final ByteBuffer buf = ints(group.rank(), 0, 64);
                ARENA.allReduce(group, buf, buf, 64, DataType.INT32, SUM);
                return buf.getInt(0);
            });
            final int sum = sumOverRanks(4, 0, 0);
            assertEquals(List.of(sum, sum, sum, sum), crossings);
            assertEquals(true, groups.crossNodeMessages() > 0, "no message passed between the nodes");
        }
        try (LocalGroups groups = new LocalGroups(2, 4096, null))
        {
            groups.run(group ->
            {
                assertNotNull(ArenaAlgorithm.spanning(group));
                return null;
            });
        }
    }

    /**
     * The arena keeps one operation's bookkeeping for the next: a steady run of operations makes none, and what is
     * kept holds none of the application's buffers. The scripts above run with the kept one, each operation's
     * results checked.
     */
    @Test
    void aSteadyRunOfOperationsKeepsOneBookkeepingPerArena() throws Exception
    {
        try (LocalGroups groups = new LocalGroups(3, 4096, null))
        {
            final List<String> failures = groups.run(group ->
            {
                final ByteBuffer buf = ints(group.rank(), 0, 64);
                Object kept = null;
                for (int i = 0; i < 20; i++)
                {
                    ARENA.allReduce(group, buf, buf, 64, DataType.INT32, SUM);
                    final Object now = group.arena().spareSteps().get();
                    if (null == now || null != kept && now != kept)
                    {
                        return "operation " + i + " left " + now + " where the one before left " + kept;
                    }
                    kept = now;
                }
                return ((ArenaSteps)kept).holdsAnOperation() ? "the kept bookkeeping holds the last operation's" : null;
            });
            assertEquals(List.of(), failures.stream().filter(f -> null != f).toList());
        }
    }

    /** The same script on every rank: what a communicator's ranks issue. */
    private static List<Op> script(final int n, final long seed)
    {
        return script(n, seed, OPERATIONS, MAX_COUNT);
    }

    private static List<Op> script(final int n, final long seed, final int operations, final int maxCount)
    {
        final Random random = new Random(seed);
        final List<Op> ops = new ArrayList<>();
        for (int i = 0; i < operations; i++)
        {
            final Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
            // Mostly small (one step, the one-round path), some of several steps.
            final int count = random.nextInt(4) == 0 ? 1 + random.nextInt(maxCount) : 1 + random.nextInt(40);
            ops.add(new Op(kind, count, random.nextInt(n)));
        }
        return ops;
    }

    /**
     * Runs the script, pausing at random; returns the first mismatch, or null. With pools, each operation's buffers
     * are their first bytes, overwritten as soon as the operation returns; else fresh buffers.
     */
    private static String runScript(
        final PeerGroup group, final List<Op> ops, final long seed, final ByteBuffer sendPool, final ByteBuffer recvPool)
    {
        final Random pauses = new Random(seed);
        // Every rank runs the whole script whatever it finds, so that a mismatch is reported, not a hang.
        String firstWrong = null;
        final int n = group.size();
        final int me = group.rank();
        for (int index = 0; index < ops.size(); index++)
        {
            final int i = index;
            final Op op = ops.get(i);
            final int c = op.count();
            switch (op.kind())
            {
                case ALL_REDUCE ->
                {
                    final ByteBuffer recv = ints(recvPool, 0, 0, c);
                    ARENA.allReduce(group, ints(sendPool, me, i, c), recv, c, DataType.INT32, SUM);
                    poison(sendPool);
                    final String wrong = check(recv, c, (e) -> sumOverRanks(n, i, e), i, op);
                    firstWrong = null == firstWrong ? wrong : firstWrong;
                }
                case REDUCE ->
                {
                    final ByteBuffer recv = ints(recvPool, 0, 0, c);
                    ARENA.reduce(group, ints(sendPool, me, i, c), recv, c, DataType.INT32, SUM, op.root());
                    poison(sendPool);
                    if (me == op.root())
                    {
                        final String wrong = check(recv, c, (e) -> sumOverRanks(n, i, e), i, op);
                        firstWrong = null == firstWrong ? wrong : firstWrong;
                    }
                }
                case REDUCE_SCATTER ->
                {
                    final ByteBuffer recv = ints(recvPool, 0, 0, c);
                    ARENA.reduceScatter(group, ints(sendPool, me, i, n * c), recv, c, DataType.INT32, SUM);
                    poison(sendPool);
                    final String wrong = check(recv, c, (e) -> sumOverRanks(n, i, me * c + e), i, op);
                    firstWrong = null == firstWrong ? wrong : firstWrong;
                }
                case ALL_GATHER ->
                {
                    final ByteBuffer recv = ints(recvPool, 0, 0, n * c);
                    ARENA.allGather(group, ints(sendPool, me, i, c), recv, c, DataType.INT32);
                    poison(sendPool);
                    final String wrong = check(recv, n * c, (e) -> value(e / c, i, e % c), i, op);
                    firstWrong = null == firstWrong ? wrong : firstWrong;
                }
                case BROADCAST ->
                {
                    final ByteBuffer buf = ints(sendPool, me, i, c);
                    ARENA.broadcast(group, buf, c, DataType.INT32, op.root());
                    final String wrong = check(buf, c, (e) -> value(op.root(), i, e), i, op);
                    firstWrong = null == firstWrong ? wrong : firstWrong;
                }
                case BARRIER -> ARENA.barrier(group);
                default -> throw new AssertionError(op);
            }
            poison(sendPool);
            poison(recvPool);
            if (pauses.nextInt(8) == 0)
            {
                LockSupport.parkNanos(pauses.nextInt(2_000_000));
            }
        }
        return firstWrong;
    }

    @FunctionalInterface
    private interface Expected
    {
        int at(int element);
    }

    private static String check(final ByteBuffer buf, final int count, final Expected expected, final int i,
        final Op op)
    {
        for (int e = 0; e < count; e++)
        {
            if (buf.getInt(e * Integer.BYTES) != expected.at(e))
            {
                return "operation " + i + " " + op + ": element " + e + " is " + buf.getInt(e * Integer.BYTES) +
                    ", not " + expected.at(e);
            }
        }
        return null;
    }

    private static int value(final int rank, final int operation, final int element)
    {
        return rank * 1_000_003 + operation * 7919 + element;
    }

    private static int sumOverRanks(final int n, final int operation, final int element)
    {
        int sum = 0;
        for (int r = 0; r < n; r++)
        {
            sum += value(r, operation, element);
        }
        return sum;
    }

    private static ByteBuffer ints(final int rank, final int operation, final int count)
    {
        return ints(null, rank, operation, count);
    }

    /** A buffer of values: the first bytes of the pool, or a fresh buffer without one. */
    private static ByteBuffer ints(final ByteBuffer pool, final int rank, final int operation, final int count)
    {
        final ByteBuffer buf = null == pool ?
            ByteBuffer.allocateDirect(count * Integer.BYTES).order(ByteOrder.nativeOrder()) :
            pool.slice(0, count * Integer.BYTES).order(ByteOrder.nativeOrder());
        for (int e = 0; e < count; e++)
        {
            buf.putInt(e * Integer.BYTES, value(rank, operation, e));
        }
        return buf;
    }

    /** Writes over a pool's every byte, as an application reusing its buffer would. */
    private static void poison(final ByteBuffer pool)
    {
        if (null != pool)
        {
            for (int i = 0; i + Long.BYTES <= pool.capacity(); i += Long.BYTES)
            {
                pool.putLong(i, -1L);
            }
        }
    }
}
