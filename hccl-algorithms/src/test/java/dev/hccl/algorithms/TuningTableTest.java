package dev.hccl.algorithms;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.CollectiveAlgorithm;
import org.junit.jupiter.api.Test;

import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tuning table: a row for every standard algorithm and protocol, the limits the catalog registered before the
 * table held them, and the protocols' prices.
 */
class TuningTableTest
{
    private static final TuningTable TABLE = TuningTable.standard();
    private static final AlgorithmCatalog CATALOG = AlgorithmCatalog.standard();
    private static final RankLayout TWO_BY_FOUR = RankLayout.blocks(2, 4);
    private static final long MIB = 1 << 20;

    @Test
    void everyStandardAlgorithmHasAnAdjustmentForEveryProtocol()
    {
        for (final Operation op : Operation.values())
        {
            for (final String name : CATALOG.namesFor(op))
            {
                assertTrue(TABLE.algorithms().contains(name.toLowerCase(Locale.ROOT)), name + " has no row");
                for (final WireProtocol protocol : WireProtocol.values())
                {
                    assertNotNull(TABLE.adjustment(name, protocol), name + " " + protocol);
                }
            }
        }
        for (final WireProtocol protocol : WireProtocol.values())
        {
            assertNotNull(TABLE.costs(protocol), protocol.toString());
        }
        assertSame(TuningTable.Adjustment.UNMEASURED, TABLE.adjustment("a plug-in", WireProtocol.HALF));
    }

    @Test
    void theCatalogReadsTheLimitsItUsedToWriteAtRegistration()
    {
        assertEquals(new AutoLimits(4 * 1024, 4), TABLE.autoLimits(FullMeshAlgorithm.NAME));
        assertEquals(new AutoLimits(4 * 1024, 4), CATALOG.autoLimits(Operation.ALL_REDUCE, FullMeshAlgorithm.NAME));
        for (final Operation op : Operation.values())
        {
            for (final String name : CATALOG.namesFor(op))
            {
                final AutoLimits expected = FullMeshAlgorithm.NAME.equals(name) ? new AutoLimits(4 * 1024, 4) :
                    AutoLimits.NONE;
                assertEquals(expected, CATALOG.autoLimits(op, name), op + " " + name);
            }
        }
    }

    @Test
    void plainUnmeasuredIsTheAlgorithmsOwnFormula()
    {
        for (final RankLayout layout : new RankLayout[] {RankLayout.singleNode(4), TWO_BY_FOUR})
        {
            for (final Operation op : Operation.values())
            {
                for (final CollectiveAlgorithm algorithm : CATALOG.algorithmsFor(op))
                {
                    final CostedAlgorithm costed = (CostedAlgorithm)algorithm;
                    final String name = CATALOG.nameOf(op, algorithm);
                    for (final long bytes : new long[] {0, 8, 4096, 3 * MIB})
                    {
                        assertEquals(costed.predictSeconds(op, layout, bytes, LinkCosts.DEFAULTS),
                            TABLE.predictSeconds(name, costed, op, layout, bytes, LinkCosts.DEFAULTS,
                                WireProtocol.PLAIN), op + " " + name + " " + bytes);
                    }
                }
            }
        }
    }

    @Test
    void halfIsCheaperOnTheNetworkYetDearerPerWireByteReduced()
    {
        final long logical = 64 * MIB;
        final RingAlgorithm ring = new RingAlgorithm();
        final double plain = TABLE.predictSeconds(RingAlgorithm.NAME, ring, Operation.ALL_REDUCE, TWO_BY_FOUR,
            logical, LinkCosts.DEFAULTS, WireProtocol.PLAIN);
        final double half = TABLE.predictSeconds(RingAlgorithm.NAME, ring, Operation.ALL_REDUCE, TWO_BY_FOUR,
            logical, LinkCosts.DEFAULTS, WireProtocol.HALF);
        assertTrue(half < plain, "half " + half + " plain " + plain);

        // Links that only reduce: the time is the reduction's, per wire byte.
        final LinkCosts reducing = new LinkCosts(reducingOnly(), reducingOnly(), "reduction only");
        final double plainPerWireByte = TABLE.predictSeconds(RingAlgorithm.NAME, ring, Operation.ALL_REDUCE,
            TWO_BY_FOUR, logical, reducing, WireProtocol.PLAIN) / logical;
        final double halfPerWireByte = TABLE.predictSeconds(RingAlgorithm.NAME, ring, Operation.ALL_REDUCE,
            TWO_BY_FOUR, logical, reducing, WireProtocol.HALF) / (logical / 2);
        assertTrue(halfPerWireByte > plainPerWireByte, halfPerWireByte + " " + plainPerWireByte);
        assertEquals(TABLE.costs(WireProtocol.HALF).reduction(), halfPerWireByte / plainPerWireByte, 1e-9);
    }

    @Test
    void anFp16BufferIsTwiceItsBytesOfLogicalPayload()
    {
        assertSame(WireProtocol.HALF, WireProtocol.of(Operation.ALL_REDUCE, DataType.BF16));
        assertSame(WireProtocol.HALF, WireProtocol.of(Operation.REDUCE_SCATTER, DataType.FP16));
        assertSame(WireProtocol.PLAIN, WireProtocol.of(Operation.ALL_GATHER, DataType.FP16));
        assertSame(WireProtocol.PLAIN, WireProtocol.of(Operation.ALL_REDUCE, DataType.FP32));
        assertEquals(2048, WireProtocol.HALF.logicalBytes(1024, DataType.FP16));
        assertEquals(1024, WireProtocol.HALF.wireBytes(2048));
        assertEquals(1024, WireProtocol.PLAIN.logicalBytes(1024, DataType.FP16));
    }

    @Test
    void anFp8BufferIsFourTimesItsBytesOfLogicalPayloadAndItsTrainingStepScalesAndConverts()
    {
        assertSame(WireProtocol.QUARTER, WireProtocol.of(Operation.ALL_REDUCE, DataType.FP8_E4M3));
        assertSame(WireProtocol.QUARTER, WireProtocol.of(Operation.REDUCE, DataType.FP8_E5M2));
        assertSame(WireProtocol.PLAIN, WireProtocol.of(Operation.BROADCAST, DataType.FP8_E5M2));
        assertEquals(4096, WireProtocol.QUARTER.logicalBytes(1024, DataType.FP8_E4M3));
        assertEquals(1024, WireProtocol.QUARTER.wireBytes(4096));

        // Links that only reduce: an FP8 wire byte costs the table's factor times FP32's.
        final long logical = 64 * MIB;
        final RingAlgorithm ring = new RingAlgorithm();
        final LinkCosts reducing = new LinkCosts(reducingOnly(), reducingOnly(), "reduction only");
        final double plainPerWireByte = TABLE.predictSeconds(RingAlgorithm.NAME, ring, Operation.ALL_REDUCE,
            TWO_BY_FOUR, logical, reducing, WireProtocol.PLAIN) / logical;
        final double quarterPerWireByte = TABLE.predictSeconds(RingAlgorithm.NAME, ring, Operation.ALL_REDUCE,
            TWO_BY_FOUR, logical, reducing, WireProtocol.QUARTER) / (logical / 4);
        assertEquals(TABLE.costs(WireProtocol.QUARTER).reduction(), quarterPerWireByte / plainPerWireByte, 1e-9);
        assertTrue(TABLE.costs(WireProtocol.QUARTER).reduction() > 1);

        // A training step under FP8: the conversions priced as HALF's, so it costs less than a HALF step by the
        // bytes it does not send, and more than the FP8 all-reduce alone (the scale's all-reduce and the conversions).
        final long bucket = 64 * MIB;
        final double fp8Step = TABLE.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, WireProtocol.QUARTER, 1);
        assertTrue(fp8Step < TABLE.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, WireProtocol.HALF, 1));
        assertTrue(fp8Step > TABLE.predictSeconds(RingAlgorithm.NAME, ring, Operation.ALL_REDUCE, TWO_BY_FOUR,
            bucket / 4, LinkCosts.DEFAULTS, WireProtocol.QUARTER));
    }

    @Test
    void aSparseStepIsTheSelectionAnAllGatherOfThePairsAndTheScatterAdd()
    {
        final long elements = 4 * MIB;
        final double fraction = 0.01;
        final long pairsPerRank = (long)Math.ceil(fraction * elements) * 8;
        final long gathered = pairsPerRank * TWO_BY_FOUR.worldSize();
        double allGather = Double.POSITIVE_INFINITY;
        for (final CollectiveAlgorithm algorithm : CATALOG.algorithmsFor(Operation.ALL_GATHER))
        {
            allGather = Math.min(allGather,
                ((CostedAlgorithm)algorithm).predictSeconds(Operation.ALL_GATHER, TWO_BY_FOUR, gathered,
                    LinkCosts.DEFAULTS));
        }
        final TuningTable.ProtocolCosts sparse = TABLE.costs(WireProtocol.SPARSE);
        final double gamma = LinkCosts.DEFAULTS.local().gamma();
        final double expected = allGather + gamma * (sparse.encode() * elements * 4 + sparse.decode() * gathered);
        assertEquals(expected, TABLE.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, elements * 4, WireProtocol.SPARSE,
            fraction), expected * 1e-12);
        assertThrows(IllegalArgumentException.class, () -> TABLE.predictSeconds(RingAlgorithm.NAME,
            new RingAlgorithm(), Operation.ALL_GATHER, TWO_BY_FOUR, gathered, LinkCosts.DEFAULTS, WireProtocol.SPARSE));
    }

    /** The all-reduce of {@code wireBytes} the cost model would choose, as the table weighs it under a protocol. */
    private static double cheapestAllReduce(final long wireBytes, final LinkCosts links, final WireProtocol protocol)
    {
        return CostModel.of(CATALOG, TABLE, Operation.ALL_REDUCE, TWO_BY_FOUR).cheapestSeconds(wireBytes, wireBytes,
            links, protocol);
    }

    @Test
    void aLowRankStepIsTwoAllReducesOfTheFactorsAndTheProducts()
    {
        // 4 Mi elements: a 2048 x 2048 matrix; rank 4 sends P and Q of 2048 x 4 FP32 values each.
        final long gradient = 16 * MIB;
        final int rank = 4;
        final long factor = 2048L * rank * 4;
        final TuningTable.ProtocolCosts lowRank = TABLE.costs(WireProtocol.LOW_RANK);
        final double gamma = LinkCosts.DEFAULTS.local().gamma();
        final double expected = 2 * cheapestAllReduce(factor, LinkCosts.DEFAULTS, WireProtocol.LOW_RANK) +
            gamma * (lowRank.encode() * rank + lowRank.decode()) * gradient;
        final double step = TABLE.lowRankStepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, rank);
        assertEquals(expected, step, expected * 1e-12);
        // Its factors' all-reduces cost what FP32 all-reduces of their size cost, once the table is unadjusted.
        assertEquals(cheapestAllReduce(factor, LinkCosts.DEFAULTS, WireProtocol.PLAIN),
            cheapestAllReduce(factor, LinkCosts.DEFAULTS, WireProtocol.LOW_RANK), 1e-15);
        // A higher rank costs more computation and more bytes.
        assertTrue(TABLE.lowRankStepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, 8) > step);
        // Where the network is the bottleneck (1 Gbit/s), 256 times fewer bytes beat the products; a bucket too
        // small to gain is priced as it is sent, plain.
        final LinkCosts slowNetwork = new LinkCosts(LinkCosts.DEFAULTS.local(),
            new CostParameters(50e-6, 1 / 0.12e9, LinkCosts.DEFAULTS.local().gamma()), "1 GbE");
        assertTrue(TABLE.lowRankStepSeconds(TWO_BY_FOUR, slowNetwork, gradient, 1) <
            TABLE.stepSeconds(TWO_BY_FOUR, slowNetwork, gradient, WireProtocol.PLAIN, 1));
        assertEquals(TABLE.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, 20, WireProtocol.PLAIN, 1),
            TABLE.lowRankStepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, 20, 1));
        assertThrows(IllegalArgumentException.class,
            () -> TABLE.lowRankStepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, 0));
        assertThrows(IllegalArgumentException.class,
            () -> TABLE.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, WireProtocol.LOW_RANK, 1));
        assertThrows(IllegalArgumentException.class, () -> TABLE.predictSeconds(RingAlgorithm.NAME,
            new RingAlgorithm(), Operation.ALL_REDUCE, TWO_BY_FOUR, factor, LinkCosts.DEFAULTS, WireProtocol.LOW_RANK));
    }

    @Test
    void aHalfStepNarrowsAllReducesHalfTheBytesAndWidens()
    {
        final long gradient = 64 * MIB;
        double allReduce = Double.POSITIVE_INFINITY;
        for (final CollectiveAlgorithm algorithm : CATALOG.algorithmsFor(Operation.ALL_REDUCE))
        {
            final String name = CATALOG.nameOf(Operation.ALL_REDUCE, algorithm);
            if (CATALOG.autoLimits(Operation.ALL_REDUCE, name).admit(TWO_BY_FOUR.worldSize(), gradient / 2))
            {
                allReduce = Math.min(allReduce, TABLE.predictSeconds(name, (CostedAlgorithm)algorithm,
                    Operation.ALL_REDUCE, TWO_BY_FOUR, gradient, LinkCosts.DEFAULTS, WireProtocol.HALF));
            }
        }
        final TuningTable.ProtocolCosts half = TABLE.costs(WireProtocol.HALF);
        final double expected = allReduce +
            LinkCosts.DEFAULTS.local().gamma() * (half.encode() * gradient + half.decode() * gradient / 2);
        final double step = TABLE.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, WireProtocol.HALF, 1);
        assertEquals(expected, step, expected * 1e-12);
        // Where the network is the bottleneck (1 Gbit/s, as PERFORMANCE.md's simulated cluster), halving its bytes
        // pays for the conversions; on the defaults' 10 GbE the model says it does not, at this size.
        final LinkCosts slowNetwork = new LinkCosts(LinkCosts.DEFAULTS.local(),
            new CostParameters(50e-6, 1 / 0.12e9, LinkCosts.DEFAULTS.local().gamma()), "1 GbE");
        assertTrue(TABLE.stepSeconds(TWO_BY_FOUR, slowNetwork, gradient, WireProtocol.HALF, 1) <
            TABLE.stepSeconds(TWO_BY_FOUR, slowNetwork, gradient, WireProtocol.PLAIN, 1));
    }

    @Test
    void anAdjustmentScalesItsAlgorithmsLinks()
    {
        final TuningTable slowLatency = TABLE.withAdjustment(RingAlgorithm.NAME, WireProtocol.PLAIN,
            new TuningTable.Adjustment(2.0, 3.0));
        final RingAlgorithm ring = new RingAlgorithm();
        final CostParameters local = LinkCosts.DEFAULTS.local();
        final CostParameters network = LinkCosts.DEFAULTS.network();
        final LinkCosts scaled = new LinkCosts(
            new CostParameters(local.alpha() * 2, local.beta() * 3, local.gamma()),
            new CostParameters(network.alpha() * 2, network.beta() * 3, network.gamma()), "scaled");
        assertEquals(ring.predictSeconds(Operation.ALL_REDUCE, TWO_BY_FOUR, MIB, scaled),
            slowLatency.predictSeconds("RING", ring, Operation.ALL_REDUCE, TWO_BY_FOUR, MIB, LinkCosts.DEFAULTS,
                WireProtocol.PLAIN));
        assertSame(TuningTable.Adjustment.UNMEASURED, slowLatency.adjustment(RingAlgorithm.NAME, WireProtocol.HALF));
        assertSame(TuningTable.Adjustment.UNMEASURED, TABLE.adjustment(RingAlgorithm.NAME, WireProtocol.PLAIN));
    }

    private static CostParameters reducingOnly()
    {
        return new CostParameters(0, 0, LinkCosts.DEFAULTS.local().gamma());
    }
}
