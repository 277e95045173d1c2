package dev.hccl.core;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.AllToAllAlgorithm;
import dev.hccl.api.spi.BarrierAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.ReduceAlgorithm;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * What the selector hands each operation: the forced algorithm, by every name the catalog has for it, else the
 * automatic choice by size.
 */
class AlgorithmSelectorTest
{
    private static final AlgorithmCatalog CATALOG = AlgorithmSelector.CATALOG;
    private static final List<Operation> OPERATIONS = List.of(Operation.ALL_REDUCE, Operation.ALL_GATHER,
        Operation.REDUCE_SCATTER, Operation.BROADCAST, Operation.REDUCE, Operation.ALL_TO_ALL, Operation.BARRIER);

    private static AlgorithmSelector forcing(final String spec, final boolean multiNode)
    {
        return new AlgorithmSelector(AlgoOverride.parse(spec, CATALOG), multiNode, false);
    }

    private static Object chosen(final AlgorithmSelector selector, final Operation op, final long bytes)
    {
        return switch (op)
        {
            case ALL_REDUCE -> selector.allReduce(4, bytes);
            case ALL_GATHER -> selector.allGather(4, bytes);
            case REDUCE_SCATTER -> selector.reduceScatter(4, bytes);
            case BROADCAST -> selector.broadcast(4, bytes);
            case REDUCE -> selector.reduce(4, bytes);
            case ALL_TO_ALL -> selector.allToAll(4, bytes);
            case BARRIER -> selector.barrier(4);
            default -> throw new IllegalArgumentException(op.toString());
        };
    }

    private static Class<?> role(final Operation op)
    {
        return switch (op)
        {
            case ALL_REDUCE -> AllReduceAlgorithm.class;
            case ALL_GATHER -> AllGatherAlgorithm.class;
            case REDUCE_SCATTER -> ReduceScatterAlgorithm.class;
            case BROADCAST -> BroadcastAlgorithm.class;
            case REDUCE -> ReduceAlgorithm.class;
            case ALL_TO_ALL -> AllToAllAlgorithm.class;
            case BARRIER -> BarrierAlgorithm.class;
            default -> throw new IllegalArgumentException(op.toString());
        };
    }

    @Test
    void everyNameOfEveryOperationForcesThatAlgorithmAtEverySizeAndBothLevels()
    {
        for (final Operation op : OPERATIONS)
        {
            final List<String> names = CATALOG.namesFor(op);
            assertFalse(names.isEmpty(), op + " has no algorithm");
            for (final String name : names)
            {
                final Object expected = CATALOG.find(op, name, role(op));
                final String perOp = op.displayName().toLowerCase(Locale.ROOT) + "=" + name;
                for (final long bytes : new long[] {0, 8, 4096, 1 << 20, 64L << 20})
                {
                    assertSame(expected, chosen(forcing(perOp, false), op, bytes), perOp + " at " + bytes);
                    assertSame(expected, chosen(forcing(name, false), op, bytes), name + " at " + bytes);
                    assertSame(expected, chosen(forcing("level0:NA;level1:" + name, true), op, bytes),
                        "level1 across nodes: " + name);
                }
            }
        }
    }

    @Test
    void theAutomaticChoiceIsACatalogAlgorithmOfTheOperationAtEverySize()
    {
        final AlgorithmSelector automatic = forcing(null, false);
        for (final Operation op : OPERATIONS)
        {
            for (final long bytes : new long[] {0, 8, 4096, 4097, 1 << 20, 64L << 20})
            {
                final Object algorithm = chosen(automatic, op, bytes);
                assertEquals(true, CATALOG.algorithmsFor(op).contains(algorithm), op + " at " + bytes);
            }
        }
    }

    @Test
    void theAutomaticChoiceFollowsTheMeasuredThresholdsOfAlgorithmsMd()
    {
        final AlgorithmSelector automatic = forcing(null, false);
        final long mib = 1 << 20;
        assertEquals("fullmesh", automatic.allReduce(4, 4096).name());
        assertEquals("H-D_R", automatic.allReduce(4, 4097).name());
        assertEquals("H-D_R", automatic.allReduce(8, 8 * mib).name());
        assertEquals("ring", automatic.allReduce(4, 8 * mib + 1).name());
        assertEquals("ring", automatic.allReduce(3, 4097).name(), "not a power of two");
        assertEquals("ring", automatic.allReduce(2, mib).name(), "two ranks");
        assertEquals("H-D_R", automatic.allGather(4, mib).name());
        assertEquals("NB", automatic.allGather(3, 256 * 1024).name());
        assertEquals("ring", automatic.allGather(3, 256 * 1024 + 1).name());
        assertEquals("NB", automatic.allGather(2, 1000).name());
        assertEquals("H-D_R", automatic.reduceScatter(16, mib).name());
        assertEquals("ring", automatic.reduceScatter(6, mib).name());
        assertEquals("tree", automatic.broadcast(4, 64 * 1024 - 1).name());
        assertEquals("ring", automatic.broadcast(4, 64 * 1024).name());
        assertEquals("tree", automatic.broadcast(2, 64 * mib).name(), "two ranks: the tree sends once");
        assertEquals("tree", automatic.reduce(4, 64 * mib).name());
        assertEquals("pairwise", automatic.allToAll(4, mib).name());
        final AlgorithmSelector acrossNodes = forcing(null, true);
        assertEquals("fullmesh", acrossNodes.allReduce(4, 4096).name());
        assertEquals("hierarchical", acrossNodes.allReduce(4, 4097).name());
        assertEquals("hierarchical", acrossNodes.allReduce(6, 64 * mib).name());
    }

    @Test
    void theDebugAccountOfAChoiceGivesEveryCostedCandidatesPrediction()
    {
        final String text = AlgorithmSelector.explain(Operation.ALL_REDUCE, 4, 1 << 20);
        for (final String name : CATALOG.namesFor(Operation.ALL_REDUCE))
        {
            assertEquals(true, text.contains(name + " "), name + " missing from: " + text);
        }
        assertEquals(true, text.matches(".*ring \\d+\\.\\d us.*"), text);
    }
}
