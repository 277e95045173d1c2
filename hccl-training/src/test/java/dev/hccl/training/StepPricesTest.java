package dev.hccl.training;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.algorithms.CostModel;
import dev.hccl.algorithms.CostParameters;
import dev.hccl.algorithms.CostedAlgorithm;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.algorithms.RingAlgorithm;
import dev.hccl.algorithms.TuningTable;
import dev.hccl.algorithms.WireProtocol;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.CollectiveAlgorithm;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A training step's price: each compression's collectives as the tuning table prices them, plus what the training
 * helpers compute around them.
 */
class StepPricesTest
{
    private static final TuningTable TABLE = TuningTable.standard();
    private static final AlgorithmCatalog CATALOG = AlgorithmCatalog.standard();
    private static final StepPrices PRICES = StepPrices.standard();
    private static final RankLayout TWO_BY_FOUR = RankLayout.blocks(2, 4);
    private static final long MIB = 1 << 20;

    @Test
    void anFp8StepScalesNarrowsAllReducesAQuarterOfTheBytesAndWidens()
    {
        final RingAlgorithm ring = new RingAlgorithm();
        // A training step under FP8: the conversions priced as HALF's, so it costs less than a HALF step by the
        // bytes it does not send, and more than the FP8 all-reduce alone (the scale's all-reduce and the conversions).
        final long bucket = 64 * MIB;
        final double fp8Step = PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, WireProtocol.QUARTER, 1);
        assertTrue(fp8Step < PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, WireProtocol.HALF, 1));
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
        assertEquals(expected, PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, elements * 4, WireProtocol.SPARSE,
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
        final double step = PRICES.lowRankStepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, rank);
        assertEquals(expected, step, expected * 1e-12);
        // Its factors' all-reduces cost what FP32 all-reduces of their size cost, once the table is unadjusted.
        assertEquals(cheapestAllReduce(factor, LinkCosts.DEFAULTS, WireProtocol.PLAIN),
            cheapestAllReduce(factor, LinkCosts.DEFAULTS, WireProtocol.LOW_RANK), 1e-15);
        // A higher rank costs more computation and more bytes.
        assertTrue(PRICES.lowRankStepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, 8) > step);
        // Where the network is the bottleneck (1 Gbit/s), 256 times fewer bytes beat the products; a bucket too
        // small to gain is priced as it is sent, plain.
        final LinkCosts slowNetwork = new LinkCosts(LinkCosts.DEFAULTS.local(),
            new CostParameters(50e-6, 1 / 0.12e9, LinkCosts.DEFAULTS.local().gamma()), "1 GbE");
        assertTrue(PRICES.lowRankStepSeconds(TWO_BY_FOUR, slowNetwork, gradient, 1) <
            PRICES.stepSeconds(TWO_BY_FOUR, slowNetwork, gradient, WireProtocol.PLAIN, 1));
        assertEquals(PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, 20, WireProtocol.PLAIN, 1),
            PRICES.lowRankStepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, 20, 1));
        assertThrows(IllegalArgumentException.class,
            () -> PRICES.lowRankStepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, 0));
        assertThrows(IllegalArgumentException.class,
            () -> PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, WireProtocol.LOW_RANK, 1));
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
        final double step = PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, gradient, WireProtocol.HALF, 1);
        assertEquals(expected, step, expected * 1e-12);
        // Where the network is the bottleneck (1 Gbit/s, as PERFORMANCE.md's simulated cluster), halving its bytes
        // pays for the conversions; on the defaults' 10 GbE the model says it does not, at this size.
        final LinkCosts slowNetwork = new LinkCosts(LinkCosts.DEFAULTS.local(),
            new CostParameters(50e-6, 1 / 0.12e9, LinkCosts.DEFAULTS.local().gamma()), "1 GbE");
        assertTrue(PRICES.stepSeconds(TWO_BY_FOUR, slowNetwork, gradient, WireProtocol.HALF, 1) <
            PRICES.stepSeconds(TWO_BY_FOUR, slowNetwork, gradient, WireProtocol.PLAIN, 1));
    }

    @Test
    void aCompressionIsPricedAsTheProtocolItTravelsAs()
    {
        final long bucket = 16 * MIB;
        assertEquals(PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, WireProtocol.PLAIN, 1),
            PRICES.seconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, Compression.none()));
        assertEquals(PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, WireProtocol.HALF, 1),
            PRICES.seconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, Compression.bf16()));
        assertEquals(PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, WireProtocol.QUARTER, 1),
            PRICES.seconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, Compression.fp8e5m2()));
        assertEquals(PRICES.stepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, WireProtocol.SPARSE, 0.01),
            PRICES.seconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, Compression.topK(0.01)));
        assertEquals(PRICES.lowRankStepSeconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, 4),
            PRICES.seconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, bucket, Compression.powerSgd(4)));
        assertEquals(0, PRICES.seconds(TWO_BY_FOUR, LinkCosts.DEFAULTS, 0, Compression.topK(0.01)));
    }
}
