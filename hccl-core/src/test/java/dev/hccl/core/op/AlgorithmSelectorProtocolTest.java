package dev.hccl.core.op;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.algorithms.CostParameters;
import dev.hccl.algorithms.CostedAlgorithm;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.algorithms.TuningTable;
import dev.hccl.algorithms.WireProtocol;
import dev.hccl.api.AlgorithmChoice;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The selector prices each operation under the protocol its data type implies: FP32 as before, FP16 and BF16
 * reductions as 16-bit floats on the wire, FP8 reductions as 8-bit ones.
 */
class AlgorithmSelectorProtocolTest
{
    private static final AlgorithmCatalog CATALOG = InstalledAlgorithms.catalog();
    private static final List<RankLayout> LAYOUTS = List.of(RankLayout.singleNode(2), RankLayout.singleNode(3),
        RankLayout.singleNode(4), RankLayout.singleNode(8), RankLayout.blocks(2, 2), RankLayout.blocks(2, 4));
    private static final List<Operation> OPERATIONS = List.of(Operation.ALL_REDUCE, Operation.REDUCE_SCATTER,
        Operation.REDUCE, Operation.ALL_GATHER, Operation.BROADCAST);

    private static AlgorithmSelector automatic(final RankLayout layout)
    {
        return new AlgorithmSelector(AlgoOverride.parse(null, CATALOG), layout, true);
    }

    @Test
    void fp32ChoicesAndPredictionsAreThoseOfPlainData()
    {
        for (final RankLayout layout : LAYOUTS)
        {
            final AlgorithmSelector selector = automatic(layout);
            for (final Operation op : OPERATIONS)
            {
                for (long bytes = 8; bytes <= 64L << 20; bytes *= 8)
                {
                    final AlgorithmChoice typed = selector.choice(op, bytes, DataType.FP32);
                    final AlgorithmChoice plain = selector.choice(op, bytes);
                    assertEquals(plain.algorithm(), typed.algorithm(), layout + " " + op + " " + bytes);
                    assertEquals(plain.predictedSeconds(), typed.predictedSeconds(), layout + " " + op + " " + bytes);
                    assertFalse(typed.model().contains("protocol"), typed.model());
                }
            }
        }
    }

    /**
     * A reduction of 16-bit floats is priced as {@code HALF} (twice its bytes of FP32 payload), one of FP8 as
     * {@code QUARTER} (four times); moving either is plain data of its width.
     */
    @ParameterizedTest(name = "{0} as {1}")
    @CsvSource({"BF16, HALF, 2, FP16", "FP8_E5M2, QUARTER, 4, FP8_E4M3"})
    void narrowFloatReductionsArePricedByTheirProtocolAndTheirMovesAsPlain(final DataType type,
        final WireProtocol protocol, final int logicalPerBufferByte, final DataType sibling)
    {
        final RankLayout layout = RankLayout.blocks(2, 4);
        final AlgorithmSelector selector = automatic(layout);
        final long bytes = 8L << 20;
        final AlgorithmChoice choice = selector.choice(Operation.ALL_REDUCE, bytes, type);
        assertTrue(choice.model().endsWith("protocol " + protocol), choice.model());
        for (final Map.Entry<String, Double> e : choice.predictedSeconds().entrySet())
        {
            final CostedAlgorithm algorithm = CATALOG.find(Operation.ALL_REDUCE, e.getKey(), CostedAlgorithm.class);
            assertEquals(TuningTable.standard().predictSeconds(e.getKey(), algorithm, Operation.ALL_REDUCE, layout,
                logicalPerBufferByte * bytes, LinkCosts.DEFAULTS, protocol), e.getValue(), e.getKey());
            assertTrue(e.getValue() > selector.choice(Operation.ALL_REDUCE, bytes).predictedSeconds().get(e.getKey()),
                "reducing " + type + " costs more than as many bytes of FP32: " + e.getKey());
        }
        assertEquals(selector.choice(Operation.ALL_GATHER, bytes), selector.choice(Operation.ALL_GATHER, bytes,
            sibling));
        assertEquals(selector.choice(Operation.BROADCAST, bytes), selector.choice(Operation.BROADCAST, bytes, type));
    }

    /**
     * What a call runs is the model's choice for its size and type whatever was called before: the selector remembers
     * its latest choices, and a size seen with another type (another protocol) must not take that type's algorithm.
     */
    @Test
    void aCallRunsTheChoiceForItsOwnTypeWhateverCameBefore()
    {
        final DataType[] types = {DataType.FP32, DataType.BF16, DataType.FP8_E4M3, DataType.FP32, DataType.FP16};
        int differing = 0;
        // Reductions slow against the links, so that the protocol's price of a reduction moves some choices.
        final CostParameters slowReductions = new CostParameters(2e-6, 1 / 6e9, 1 / 0.3e9);
        for (final RankLayout layout : LAYOUTS)
        {
            final AlgorithmSelector selector = new AlgorithmSelector(AlgoOverride.parse(null, CATALOG), layout, false);
            selector.linkCosts(new LinkCosts(slowReductions, slowReductions, "measured"));
            for (long bytes = 8; bytes <= 64L << 20; bytes *= 2)
            {
                for (int round = 0; round < 2; round++)
                {
                    for (final DataType type : types)
                    {
                        final String expected = selector.choice(Operation.ALL_REDUCE, bytes, type).algorithm();
                        assertEquals(expected, selector.allReduce(null, bytes, type).name(),
                            layout + " " + bytes + " " + type);
                        assertEquals(selector.choice(Operation.REDUCE_SCATTER, bytes, type).algorithm(),
                            selector.reduceScatter(null, bytes, type).name(), layout + " " + bytes + " " + type);
                    }
                }
                for (final DataType type : types)
                {
                    if (!selector.choice(Operation.ALL_REDUCE, bytes, DataType.FP32).algorithm()
                        .equals(selector.choice(Operation.ALL_REDUCE, bytes, type).algorithm()))
                    {
                        differing++;
                    }
                }
            }
        }
        assertTrue(differing > 0, "no size where a narrow type's choice differs from FP32's: the test proves nothing");
    }
}
