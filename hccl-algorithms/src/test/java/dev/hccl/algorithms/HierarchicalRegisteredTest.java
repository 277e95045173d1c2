package dev.hccl.algorithms;

import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hierarchical collectives on registered buffers: within a node the ranks read each other's buffers where they lie
 * (the node level's in-place steps), and a buffer is the application's again when the call returns. Every rank writes
 * over its buffers as soon as a call returns, so a rank that returned while another still read its buffer shows as a
 * wrong result on that other rank.
 */
@Timeout(300)
class HierarchicalRegisteredTest
{
    /** Elements per rank's block: 68 KB of INT32, above the size from which registered buffers are read in place. */
    private static final int BLOCK = 17_011;
    private static final int ROUNDS = 6;
    private static final Reducer SUM = Reducers.of(DataType.INT32, ReduceOp.SUM);
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    @ParameterizedTest(name = "nodes {0}")
    @ValueSource(strings = {"0,0,1,1", "0,0,0,1,1,1", "0,1,0,1"})
    void theNodeLevelReadsRegisteredBuffersInPlaceAndLeavesThemOnReturn(final String layout) throws Exception
    {
        final int[] nodeOfRank = Arrays.stream(layout.split(",")).mapToInt(Integer::parseInt).toArray();
        final int n = nodeOfRank.length;
        final HierarchicalAlgorithm algorithm = HierarchicalAlgorithm.overRing();
        try (LocalGroups groups = new LocalGroups(nodeOfRank, 4096, 7L * n))
        {
            final int poolBytes = n * (BLOCK + ROUNDS) * Integer.BYTES;
            final ByteBuffer[] sends = groups.register(poolBytes);
            final ByteBuffer[] recvs = groups.register(poolBytes);
            // One operation per run: the harness matches messages by peer and tag alone, where a communicator's
            // sequence numbers keep two operations' messages apart.
            for (int round = 0; round < ROUNDS; round++)
            {
                for (final Kind kind : Kind.values())
                {
                    final int r0 = round;
                    final List<String> failures = groups.run(group ->
                        run(kind, r0, group, algorithm, sends[group.rank()], recvs[group.rank()]));
                    for (int r = 0; r < n; r++)
                    {
                        assertNull(failures.get(r), "nodes " + layout + " rank " + r);
                    }
                }
            }
            assertTrue(groups.registeredReads() > 0, "no rank read another's registered buffer in place");
        }
    }

    private enum Kind
    {
        ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER
    }

    /**
     * One rank's operation of a round (odd rounds in place where the operation has a place): its inputs written, the
     * call, the result checked, then both buffers written over at once, as an application that reuses them would.
     *
     * @return the first wrong element, described; null when all are right.
     */
    private static String run(final Kind kind, final int round, final PeerGroup group,
        final HierarchicalAlgorithm algorithm, final ByteBuffer send, final ByteBuffer recv)
    {
        final int n = group.size();
        final int me = group.rank();
        final boolean inPlace = (round & 1) == 1;
        final int count = BLOCK + round;
        if (new Random(31L * round + me).nextInt(3) == 0)
        {
            pause();
        }
        String wrong = null;
        switch (kind)
        {
            case ALL_REDUCE ->
            {
                // Element i of rank r is (r + 1) * (i % 31 + 1). The algorithms take buffers of the operation's size,
                // as the communicator slices them: views of the pools.
                final ByteBuffer out = view(recv, 0, count);
                final ByteBuffer in = inPlace ? out : view(send, 0, count);
                fill(in, count, me, 0);
                algorithm.allReduce(group, in, out, count, DataType.INT32, SUM);
                wrong = check("allReduce", round, out, count, n, -1, 0);
            }
            case ALL_GATHER ->
            {
                // Rank r's block holds its elements from r * count on.
                final ByteBuffer block = inPlace ? view(recv, me * count, count) : view(send, 0, count);
                fill(block, count, me, me * count);
                algorithm.allGather(group, block, view(recv, 0, n * count), count, DataType.INT32);
                for (int r = 0; r < n && wrong == null; r++)
                {
                    wrong = check("allGather", round, view(recv, r * count, count), count, n, r, r * count);
                }
            }
            default ->
            {
                // Block b of every rank's input; rank b receives their sum.
                final ByteBuffer in = view(send, 0, n * count);
                fill(in, n * count, me, 0);
                algorithm.reduceScatter(group, in, view(recv, 0, count), count, DataType.INT32, SUM);
                wrong = check("reduceScatter", round, view(recv, 0, count), count, n, -1, me * count);
            }
        }
        scribble(send, recv);
        return wrong;
    }

    /** Elements {@code first} to {@code first + count} of a pool, in native order. */
    private static ByteBuffer view(final ByteBuffer pool, final int first, final int count)
    {
        return pool.slice(first * Integer.BYTES, count * Integer.BYTES).order(NATIVE);
    }

    /** Element i of {@code buf} as rank {@code rank}'s value of global element {@code from + i}. */
    private static void fill(final ByteBuffer buf, final int count, final int rank, final int from)
    {
        for (int i = 0; i < count; i++)
        {
            buf.putInt(i * Integer.BYTES, value(rank, from + i));
        }
    }

    private static int value(final int rank, final int element)
    {
        return (rank + 1) * (element % 31 + 1);
    }

    /**
     * The first element of {@code buf} that is not rank {@code rank}'s value of global element {@code from + i} (the
     * sum over all ranks' values when {@code rank} is -1), described; null when all are.
     */
    private static String check(final String what, final int round, final ByteBuffer buf, final int count, final int n,
        final int rank, final int from)
    {
        for (int i = 0; i < count; i++)
        {
            final int expected = rank >= 0 ? value(rank, from + i) : n * (n + 1) / 2 * ((from + i) % 31 + 1);
            if (buf.getInt(i * Integer.BYTES) != expected)
            {
                return what + " round " + round + ": element " + i + " is " + buf.getInt(i * Integer.BYTES) +
                    ", expected " + expected;
            }
        }
        return null;
    }

    /** Writes over both buffers at once, as an application that reuses them would. */
    private static void scribble(final ByteBuffer send, final ByteBuffer recv)
    {
        for (int i = 0; i + Integer.BYTES <= send.capacity(); i += Integer.BYTES)
        {
            send.putInt(i, -1);
            recv.putInt(i, -1);
        }
    }

    private static void pause()
    {
        try
        {
            Thread.sleep(1);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
