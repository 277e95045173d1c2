package dev.hccl.algorithms;

import dev.hccl.api.CommConfig;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bruck's all-gather and the ring's scatter + all-gather broadcast move every byte to every rank, for every world
 * size up to 9 (powers of two and not), counts around the world size and across segments, both placements of the
 * all-gather input and every broadcast root; and the cost formulas of the algorithms behave.
 */
@Timeout(300)
class BruckAndScatterBroadcastTest
{
    /** Bytes are moved, not reduced: the types only change the element size. */
    private static final DataType[] TYPES = { DataType.INT8, DataType.INT32, DataType.FP16, DataType.FP64 };
    private static final int SMALL_SEGMENT = 256;
    /** Several 256-byte segments per block or chunk for every type and world size. */
    private static final int MULTI_SEGMENT_COUNT = 777;

    private final AllGatherAlgorithm bruck = new BruckAllGatherAlgorithm();
    private final BroadcastAlgorithm scatterRing = new RingAlgorithm();

    /** Where a rank's all-gather input lies. */
    private enum Placement
    {
        /** A buffer of its own. */
        SEPARATE,
        /** This rank's block of the output (what the communicator passes in place). */
        IN_PLACE,
        /** The output buffer itself, the input in its first block (the communicator passes that for an input that
         * starts where the output starts). */
        OUTPUT_START
    }

    private static int[] counts(final int n)
    {
        return new int[]{ 0, 1, n - 1, n + 1, 13, 1009, 65537 };
    }

    @ParameterizedTest(name = "n = {0}")
    @ValueSource(ints = { 1, 2, 3, 4, 5, 6, 7, 8, 9 })
    void bruckGathersEveryBlockOnEveryRank(final int n) throws Exception
    {
        final Random random = new Random(n);
        try (LocalGroups groups = new LocalGroups(n, CommConfig.SEGMENT_SIZE.defaultValue(), null);
            LocalGroups small = new LocalGroups(n, SMALL_SEGMENT, null))
        {
            for (final DataType type : TYPES)
            {
                for (final Placement placement : Placement.values())
                {
                    for (final int count : counts(n))
                    {
                        checkAllGather(groups, n, count, type, placement, random);
                    }
                    checkAllGather(small, n, MULTI_SEGMENT_COUNT, type, placement, random);
                }
            }
        }
    }

    @ParameterizedTest(name = "n = {0}")
    @ValueSource(ints = { 1, 2, 3, 4, 5, 6, 7, 8, 9 })
    void scatterRingBroadcastReachesEveryRankFromEveryRoot(final int n) throws Exception
    {
        final Random random = new Random(100 + n);
        try (LocalGroups groups = new LocalGroups(n, CommConfig.SEGMENT_SIZE.defaultValue(), null);
            LocalGroups small = new LocalGroups(n, SMALL_SEGMENT, null))
        {
            for (final DataType type : TYPES)
            {
                for (int root = 0; root < n; root++)
                {
                    for (final int count : counts(n))
                    {
                        checkBroadcast(groups, n, count, type, root, random);
                    }
                    checkBroadcast(small, n, MULTI_SEGMENT_COUNT, type, root, random);
                }
            }
        }
    }

    @ParameterizedTest(name = "n = {0}")
    @ValueSource(ints = { 3, 5, 8, 9 })
    void bothHoldWhenMessagesArriveInAnyOrder(final int n) throws Exception
    {
        final Random random = new Random(200 + n);
        try (LocalGroups jittery = new LocalGroups(n, SMALL_SEGMENT, (long)n))
        {
            for (final int count : new int[]{ n + 1, MULTI_SEGMENT_COUNT })
            {
                checkAllGather(jittery, n, count, DataType.INT32, Placement.IN_PLACE, random);
                checkAllGather(jittery, n, count, DataType.FP64, Placement.SEPARATE, random);
                checkBroadcast(jittery, n, count, DataType.INT32, 0, random);
                checkBroadcast(jittery, n, count, DataType.FP16, n - 1, random);
                checkBroadcast(jittery, n, count, DataType.INT8, n / 2, random);
            }
        }
    }

    private void checkAllGather(
        final LocalGroups groups, final int n, final int count, final DataType type, final Placement placement,
        final Random random) throws Exception
    {
        final int blockBytes = count * type.size();
        final byte[][] inputs = new byte[n][blockBytes];
        final byte[] expected = new byte[n * blockBytes];
        for (int r = 0; r < n; r++)
        {
            random.nextBytes(inputs[r]);
            System.arraycopy(inputs[r], 0, expected, r * blockBytes, blockBytes);
        }
        final long garbageSeed = random.nextLong();

        final List<byte[][]> results = groups.run(group ->
        {
            final int r = group.rank();
            final ByteBuffer recv = direct(n * blockBytes);
            recv.put(0, garbage(garbageSeed + r, n * blockBytes));
            final ByteBuffer send;
            switch (placement)
            {
                case IN_PLACE:
                    recv.put(r * blockBytes, inputs[r]);
                    send = recv.slice(r * blockBytes, blockBytes).order(ByteOrder.nativeOrder());
                    break;
                case OUTPUT_START:
                    recv.put(0, inputs[r]);
                    send = recv;
                    break;
                default:
                    send = direct(blockBytes);
                    send.put(0, inputs[r]);
                    break;
            }
            bruck.allGather(group, send, recv, count, type);
            return new byte[][]{ bytes(recv, n * blockBytes), placement == Placement.SEPARATE ?
                bytes(send, blockBytes) : inputs[r] };
        });

        for (int r = 0; r < n; r++)
        {
            final String context = "n=" + n + " count=" + count + " " + type + " " + placement + " rank " + r;
            assertArrayEquals(expected, results.get(r)[0], context);
            assertArrayEquals(inputs[r], results.get(r)[1], context + ": the input changed");
        }
    }

    private void checkBroadcast(
        final LocalGroups groups, final int n, final int count, final DataType type, final int root,
        final Random random) throws Exception
    {
        final int bytes = count * type.size();
        final byte[] data = new byte[bytes];
        random.nextBytes(data);
        final long garbageSeed = random.nextLong();

        final List<byte[]> results = groups.run(group ->
        {
            final ByteBuffer buf = direct(bytes);
            buf.put(0, group.rank() == root ? data : garbage(garbageSeed + group.rank(), bytes));
            scatterRing.broadcast(group, buf, count, type, root);
            return bytes(buf, bytes);
        });

        for (int r = 0; r < n; r++)
        {
            assertArrayEquals(data, results.get(r), "n=" + n + " count=" + count + " " + type + " root " + root +
                " rank " + r);
        }
    }

    @Test
    void ringCostsGrowWithBytesForItsOperations()
    {
        final RingAlgorithm ring = new RingAlgorithm();
        for (final Operation op : new Operation[]{
            Operation.ALL_REDUCE, Operation.ALL_GATHER, Operation.REDUCE_SCATTER, Operation.BROADCAST })
        {
            assertGrowsWithBytes(ring, op);
        }
        assertRefuses(ring, Operation.ALL_TO_ALL);
        assertRefuses(ring, Operation.REDUCE);
    }

    /** The tree's broadcast sends the whole message once per level, the scatter + ring about twice in all. */
    @Test
    void scatterRingBroadcastOvertakesTheTreeForLargeMessages()
    {
        final CostParameters cost = CostParameters.LOOPBACK_TCP;
        final RingAlgorithm ring = new RingAlgorithm();
        final BinomialTreeAlgorithm tree = new BinomialTreeAlgorithm();
        assertTrue(tree.predictSeconds(Operation.BROADCAST, 8, 1 << 10, cost) <
            ring.predictSeconds(Operation.BROADCAST, 8, 1 << 10, cost));
        assertTrue(ring.predictSeconds(Operation.BROADCAST, 8, 1 << 20, cost) <
            tree.predictSeconds(Operation.BROADCAST, 8, 1 << 20, cost));
    }

    @Test
    void theCatalogKnowsBothByName()
    {
        final AlgorithmCatalog catalog = AlgorithmCatalog.standard();
        assertTrue(catalog.find(Operation.ALL_GATHER, "nb", AllGatherAlgorithm.class)
            instanceof BruckAllGatherAlgorithm);
        assertTrue(catalog.find(Operation.BROADCAST, "ring", BroadcastAlgorithm.class) instanceof RingAlgorithm);
    }

    @Test
    void binomialTreeCostsGrowWithBytesForItsOperations()
    {
        final BinomialTreeAlgorithm tree = new BinomialTreeAlgorithm();
        assertGrowsWithBytes(tree, Operation.BROADCAST);
        assertGrowsWithBytes(tree, Operation.REDUCE);
        assertRefuses(tree, Operation.ALL_REDUCE);
    }

    @Test
    void pairwiseCostGrowsWithBytes()
    {
        final PairwiseAllToAllAlgorithm pairwise = new PairwiseAllToAllAlgorithm();
        assertGrowsWithBytes(pairwise, Operation.ALL_TO_ALL);
        assertRefuses(pairwise, Operation.ALL_GATHER);
    }

    @Test
    void bruckCostGrowsWithBytesAndBeatsTheRingOnLatency()
    {
        final BruckAllGatherAlgorithm nb = new BruckAllGatherAlgorithm();
        assertGrowsWithBytes(nb, Operation.ALL_GATHER);
        assertRefuses(nb, Operation.BROADCAST);
        // Same bytes on the wire as the ring, in log2(n) messages instead of n-1.
        final CostParameters cost = CostParameters.LOOPBACK_TCP;
        assertTrue(nb.predictSeconds(Operation.ALL_GATHER, 9, 9 * 64, cost) <
            new RingAlgorithm().predictSeconds(Operation.ALL_GATHER, 9, 9 * 64, cost));
    }

    /** A barrier moves no bytes: its cost grows with the world size, not with {@code bytes}. */
    @Test
    void disseminationCostGrowsWithWorldSizeOnly()
    {
        final DisseminationBarrierAlgorithm barrier = new DisseminationBarrierAlgorithm();
        final CostParameters cost = CostParameters.LOOPBACK_TCP;
        final double eight = barrier.predictSeconds(Operation.BARRIER, 8, 0, cost);
        assertTrue(eight > 0, "positive: " + eight);
        assertEquals(3 * cost.alpha(), eight, 1e-15);
        assertEquals(eight, barrier.predictSeconds(Operation.BARRIER, 8, 1 << 20, cost));
        assertTrue(barrier.predictSeconds(Operation.BARRIER, 9, 0, cost) > eight);
        assertRefuses(barrier, Operation.ALL_REDUCE);
    }

    @Test
    void costsRefuseAWorldOfNoRanksAndNegativeBytes()
    {
        final CostParameters cost = CostParameters.LOOPBACK_TCP;
        final RingAlgorithm ring = new RingAlgorithm();
        assertThrows(IllegalArgumentException.class, () -> ring.predictSeconds(Operation.ALL_REDUCE, 0, 8, cost));
        assertThrows(IllegalArgumentException.class, () -> ring.predictSeconds(Operation.ALL_REDUCE, 4, -1, cost));
    }

    private static void assertGrowsWithBytes(final CostedAlgorithm algorithm, final Operation op)
    {
        final CostParameters cost = CostParameters.LOOPBACK_TCP;
        final double small = algorithm.predictSeconds(op, 8, 1 << 10, cost);
        final double large = algorithm.predictSeconds(op, 8, 1 << 20, cost);
        final String context = algorithm.getClass().getSimpleName() + " " + op.displayName();
        assertTrue(small > 0, context + " positive: " + small);
        assertTrue(large > small, context + " grows: " + small + " then " + large);
    }

    private static void assertRefuses(final CostedAlgorithm algorithm, final Operation op)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> algorithm.predictSeconds(op, 8, 1024, CostParameters.LOOPBACK_TCP));
        assertTrue(ex.getMessage().contains(op.displayName()), ex.getMessage());
    }

    private static ByteBuffer direct(final int bytes)
    {
        return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    }

    private static byte[] garbage(final long seed, final int bytes)
    {
        final byte[] b = new byte[bytes];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] bytes(final ByteBuffer buffer, final int length)
    {
        final byte[] b = new byte[length];
        buffer.get(0, b, 0, length);
        return b;
    }
}
