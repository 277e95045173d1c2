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
    void anFp8BufferIsFourTimesItsBytesOfLogicalPayloadAndDearerPerWireByteReduced()
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
