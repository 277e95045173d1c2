package dev.hccl.core.op;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.algorithms.AutoLimits;
import dev.hccl.algorithms.CostParameters;
import dev.hccl.algorithms.CostedAlgorithm;
import dev.hccl.algorithms.HierarchicalAlgorithm;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.api.AlgorithmChoice;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.CollectiveAlgorithm;
import dev.hccl.api.spi.PeerGroup;
import dev.hccl.api.spi.Reducer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the selector hands each operation: the forced algorithm, by every name the catalog has for it, else the
 * automatic choice by size.
 */
class AlgorithmSelectorTest
{
    private static final AlgorithmCatalog CATALOG = InstalledAlgorithms.catalog();
    private static final List<Operation> OPERATIONS = List.of(Operation.ALL_REDUCE, Operation.ALL_GATHER,
        Operation.REDUCE_SCATTER, Operation.BROADCAST, Operation.REDUCE, Operation.ALL_TO_ALL, Operation.BARRIER);
    private static final long MIB = 1 << 20;
    private static final RankLayout TWO_BY_TWO = RankLayout.blocks(2, 2);
    private static final List<Operation> HIERARCHY = List.of(Operation.ALL_REDUCE, Operation.ALL_GATHER,
        Operation.REDUCE_SCATTER, Operation.BROADCAST);

    private static AlgorithmSelector forcing(final String spec, final RankLayout layout)
    {
        return new AlgorithmSelector(AlgoOverride.parse(spec, CATALOG), layout, false);
    }

    /** A selector for ranks that share a node arena (on one node; across nodes only the levels could use it). */
    private static AlgorithmSelector forcingWithArena(final String spec, final RankLayout layout)
    {
        return new AlgorithmSelector(AlgoOverride.parse(spec, CATALOG), layout, false, LinkCosts.DEFAULTS, true);
    }

    private static AlgorithmSelector automatic(final int worldSize)
    {
        return forcing(null, RankLayout.singleNode(worldSize));
    }

    private static CollectiveAlgorithm chosen(final AlgorithmSelector selector, final Operation op, final long bytes)
    {
        return switch (op)
        {
            case ALL_REDUCE -> selector.allReduce(null, bytes);
            case ALL_GATHER -> selector.allGather(null, bytes);
            case REDUCE_SCATTER -> selector.reduceScatter(null, bytes);
            case BROADCAST -> selector.broadcast(null, bytes);
            case REDUCE -> selector.reduce(null, bytes);
            case ALL_TO_ALL -> selector.allToAll(null, bytes);
            case BARRIER -> selector.barrier(null);
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
                final CollectiveAlgorithm expected = CATALOG.find(op, name, AlgorithmCatalog.roleOf(op));
                final String perOp = op.displayName().toLowerCase(Locale.ROOT) + "=" + name;
                final boolean needsArena = expected instanceof CostedAlgorithm costed && costed.needsNodeArena();
                for (final long bytes : new long[] {0, 8, 4096, 1 << 20})
                {
                    final RankLayout one = RankLayout.singleNode(4);
                    assertSame(expected, chosen(forcingWithArena(perOp, one), op, bytes), perOp + " at " + bytes);
                    assertSame(expected, chosen(forcingWithArena(name, one), op, bytes), name + " at " + bytes);
                    final AlgorithmChoice choice = forcingWithArena(name, one).choice(op, bytes);
                    assertEquals(true, choice.forced(), choice.toString());
                    assertEquals(CATALOG.nameOf(op, expected), choice.algorithm());
                    if (needsArena)
                    {
                        // No arena spans two nodes, nor ranks that share none: the cost model decides there.
                        assertFalse(forcingWithArena(name, TWO_BY_TWO).choice(op, bytes).forced(), name);
                        assertFalse(forcing(name, one).choice(op, bytes).forced(), name);
                        continue;
                    }
                    // Across nodes a bare name forces that algorithm over all ranks; the level form composes the
                    // levels as HCCL does, for the operations the hierarchy has.
                    assertSame(expected, chosen(forcing(name, TWO_BY_TWO), op, bytes), "bare across nodes: " + name);
                    final Object levels = chosen(forcing("level0:NA;level1:" + name, TWO_BY_TWO), op, bytes);
                    if (HIERARCHY.contains(op) && !name.equals("hierarchical"))
                    {
                        assertSame(expected, ((HierarchicalAlgorithm)levels).level1(op), "level1 across nodes: " + name);
                        assertEquals("hierarchical with level1 " + name,
                            forcing("level0:NA;level1:" + name, TWO_BY_TWO).choice(op, bytes).algorithm());
                    }
                    else
                    {
                        assertSame(expected, levels, "level1 across nodes: " + name);
                    }
                }
            }
        }
    }

    @Test
    void theArenaIsWeighedOnlyWhereTheRanksShareOne()
    {
        for (final Operation op : List.of(Operation.ALL_REDUCE, Operation.ALL_GATHER, Operation.REDUCE_SCATTER,
            Operation.BROADCAST, Operation.REDUCE, Operation.BARRIER))
        {
            for (final long bytes : new long[] {8, 64 * 1024, MIB, 64 * MIB})
            {
                assertEquals("arena", forcingWithArena(null, RankLayout.singleNode(4)).choice(op, bytes).algorithm(),
                    op + " at " + bytes + " on one node with an arena");
                assertFalse(automatic(4).choice(op, bytes).predictedSeconds().containsKey("arena"), op + " without");
                assertFalse(forcingWithArena(null, TWO_BY_TWO).choice(op, bytes).predictedSeconds().containsKey("arena"),
                    op + " across nodes");
            }
        }
    }

    @Test
    void theChoiceIsTheCandidateWithTheLeastPredictedTimeForEveryShapeAndSize()
    {
        final RankLayout[] layouts = {RankLayout.singleNode(1), RankLayout.singleNode(2),
            RankLayout.singleNode(3), RankLayout.singleNode(4), RankLayout.singleNode(8), TWO_BY_TWO,
            RankLayout.blocks(2, 4), RankLayout.ofNodes(new int[] {0, 1, 0, 1, 1}),
            RankLayout.blocks(4, 4)};
        for (final RankLayout layout : layouts)
        {
            final AlgorithmSelector selector = forcing(null, layout);
            for (final Operation op : OPERATIONS)
            {
                for (long bytes = 0; bytes <= 256 * MIB; bytes = bytes == 0 ? 1 : bytes * 4)
                {
                    final CollectiveAlgorithm algorithm = chosen(selector, op, bytes);
                    assertEquals(true, CATALOG.algorithmsFor(op).contains(algorithm), op + " at " + bytes);
                    final AlgorithmChoice choice = selector.choice(op, bytes);
                    assertEquals(CATALOG.nameOf(op, algorithm), choice.algorithm(), layout + " " + choice);
                    assertFalse(choice.forced());
                    final double best = choice.predictedSeconds().get(choice.algorithm());
                    for (final double other : choice.predictedSeconds().values())
                    {
                        assertEquals(true, best <= other, layout + ": " + choice.describe());
                    }
                }
            }
        }
    }

    @Test
    void onOneNodeTheModelKeepsTheCrossoversMeasuredInAlgorithmsMd()
    {
        assertEquals("fullmesh", automatic(4).allReduce(null, 4096).name());
        assertEquals("H-D_R", automatic(4).allReduce(null, 4097).name());
        assertEquals("H-D_R", automatic(8).allReduce(null, 8 * MIB).name());
        assertEquals("ring", automatic(3).allReduce(null, 4097).name(), "not a power of two: the fold costs twice more");
        assertEquals("ring", automatic(3).allReduce(null, 16 * MIB).name());
        assertEquals("ring", automatic(2).allReduce(null, MIB).name(), "two ranks");
        assertEquals("H-D_R", automatic(4).allGather(null, MIB).name());
        assertEquals("NB", automatic(5).allGather(null, 64 * 1024).name(), "3 steps instead of 4");
        assertEquals("ring", automatic(3).allGather(null, 2 * MIB).name());
        assertEquals("H-D_R", automatic(16).reduceScatter(null, MIB).name());
        assertEquals("ring", automatic(6).reduceScatter(null, MIB).name());
        assertEquals("ring", automatic(3).reduceScatter(null, 16 * MIB).name());
        assertEquals("tree", automatic(4).broadcast(null, 512).name());
        assertEquals("ring", automatic(3).broadcast(null, 16 * MIB).name());
        assertEquals("tree", automatic(2).broadcast(null, 64 * MIB).name(), "two ranks: the tree sends once");
        assertEquals("tree", automatic(4).reduce(null, 64 * MIB).name());
        assertEquals("pairwise", automatic(4).allToAll(null, MIB).name());
        assertEquals("dissemination", automatic(4).barrier(null).name());
    }

    @Test
    void measuredLinkCostsMoveTheChoiceUnlessDeterministic()
    {
        // A 4 KiB+ broadcast on 4 ranks: the tree's 2 hops of the whole buffer against scatter + ring's 5 latencies.
        final long bytes = 32 * 1024;
        final LinkCosts slowMessages = new LinkCosts(new CostParameters(1e-3, 1 / 1.2e9, 1 / 3e9),
            LinkCosts.ETHERNET_10G, "measured");
        final LinkCosts fastMessages = new LinkCosts(new CostParameters(1e-7, 1 / 1.2e9, 1 / 3e9),
            LinkCosts.ETHERNET_10G, "measured");
        final AlgorithmSelector selector = automatic(4);
        assertEquals(true, selector.linkCosts(slowMessages));
        assertEquals("tree", selector.broadcast(null, bytes).name());
        assertEquals(true, selector.linkCosts(fastMessages));
        assertEquals("ring", selector.broadcast(null, bytes).name());
        assertEquals(true, selector.choice(Operation.BROADCAST, bytes).model().contains("measured"));

        final AlgorithmSelector pinned =
            new AlgorithmSelector(AlgoOverride.parse(null, CATALOG), RankLayout.singleNode(4), true);
        final String before = pinned.broadcast(null, bytes).name();
        assertFalse(pinned.linkCosts(slowMessages));
        assertFalse(pinned.linkCosts(fastMessages));
        assertSame(LinkCosts.DEFAULTS, pinned.linkCosts());
        assertEquals(before, pinned.broadcast(null, bytes).name());
    }

    @Test
    void sharedMemoryDefaultsPriceLevelZeroCheaperAndHoldUnderDeterminism()
    {
        final long bytes = 16 << 20;
        final RankLayout twoByFour = RankLayout.ofNodes(0, 0, 0, 0, 1, 1, 1, 1);
        final AlgorithmSelector overTcp = new AlgorithmSelector(AlgoOverride.parse(null, CATALOG), twoByFour, true);
        final AlgorithmSelector overShm = new AlgorithmSelector(AlgoOverride.parse(null, CATALOG), twoByFour, true,
            LinkCosts.SHARED_MEMORY_DEFAULTS);
        assertSame(LinkCosts.SHARED_MEMORY_DEFAULTS, overShm.linkCosts());
        assertFalse(overShm.linkCosts(LinkCosts.DEFAULTS), "HCCL_DETERMINISTIC keeps the defaults it started from");
        final double tcp = overTcp.choice(Operation.ALL_REDUCE, bytes).predictedSeconds().get(HierarchicalAlgorithm.NAME);
        final double shm = overShm.choice(Operation.ALL_REDUCE, bytes).predictedSeconds().get(HierarchicalAlgorithm.NAME);
        assertTrue(shm < tcp, "the hierarchy's intra-node phases cost less over shared memory: " + shm + " vs " + tcp);
        assertTrue(overShm.choice(Operation.ALL_REDUCE, bytes).model().contains("shared memory"),
            overShm.choice(Operation.ALL_REDUCE, bytes).model());
    }

    @Test
    void acrossNodesTheHierarchyWinsWhenTheNetworkIsSlowerThanTheNodesOwnLinks()
    {
        // 1 Gbit/s between nodes, loopback within: the simulated cluster of PERFORMANCE.md.
        final LinkCosts slowNetwork = new LinkCosts(CostParameters.LOOPBACK_TCP,
            new CostParameters(100e-6, 1 / 0.125e9, CostParameters.LOOPBACK_TCP.gamma()), "measured");
        for (final RankLayout layout : new RankLayout[] {TWO_BY_TWO, RankLayout.blocks(2, 4)})
        {
            final AlgorithmSelector selector = forcing(null, layout);
            selector.linkCosts(slowNetwork);
            // The one-shot exchange up to 4 ranks; on 8 its 7 messages per rank lost to the trees (measured).
            assertEquals(layout.worldSize() <= 4 ? "fullmesh" : "hierarchical", selector.allReduce(null, 8).name(),
                layout.toString());
            for (final long bytes : new long[] {64 * 1024, MIB, 32 * MIB})
            {
                assertEquals("hierarchical", selector.allReduce(null, bytes).name(), layout + " " + bytes);
                assertEquals("hierarchical", selector.allGather(null, bytes).name(), layout + " " + bytes);
                assertEquals("hierarchical", selector.reduceScatter(null, bytes).name(), layout + " " + bytes);
                assertEquals("hierarchical", selector.broadcast(null, bytes).name(), layout + " " + bytes);
            }
        }
        // A network as fast as the links within a node: the flat ring, which leaves each node once, is cheaper than
        // two levels that each move the buffer one after the other; from 8 MiB the all-reduce's levels overlap on
        // their separate links, and then the hierarchy is cheaper again.
        final AlgorithmSelector fast = forcing(null, TWO_BY_TWO);
        fast.linkCosts(new LinkCosts(CostParameters.LOOPBACK_TCP, CostParameters.LOOPBACK_TCP, "measured"));
        assertEquals("ring", fast.allReduce(null, 4 * MIB).name());
        assertEquals("ring", fast.allGather(null, 32 * MIB).name());
        assertEquals("ring", fast.reduceScatter(null, 32 * MIB).name());
        assertEquals("hierarchical", fast.allReduce(null, 32 * MIB).name());
        // On one node the hierarchical algorithm is never a candidate: it would be its level1 alone.
        assertFalse(automatic(4).choice(Operation.ALL_REDUCE, 32 * MIB).predictedSeconds().containsKey("hierarchical"));
    }

    @Test
    void withTheDefaultsTwoNodesTakeTheHierarchyFromAFewKiB()
    {
        // What a user on a real cluster gets without asking: a server's loopback within the nodes, 10 GbE between.
        for (final RankLayout layout : new RankLayout[] {TWO_BY_TWO, RankLayout.blocks(2, 4),
            RankLayout.blocks(2, 8)})
        {
            final AlgorithmSelector selector = forcing(null, layout);
            assertSame(LinkCosts.DEFAULTS, selector.linkCosts());
            for (long bytes = 8 * 1024; bytes <= 64 * MIB; bytes *= 2)
            {
                assertEquals("hierarchical", selector.allReduce(null, bytes).name(), layout + " " + bytes);
                assertEquals("hierarchical", selector.allGather(null, bytes).name(), layout + " " + bytes);
                assertEquals("hierarchical", selector.reduceScatter(null, bytes).name(), layout + " " + bytes);
                assertEquals("hierarchical", selector.broadcast(null, bytes).name(), layout + " " + bytes);
            }
        }
    }

    @Test
    void theOneShotExchangeIsACandidateWithinTheLimitsOfTheTable()
    {
        final AutoLimits limits = CATALOG.autoLimits(Operation.ALL_REDUCE, "fullmesh");
        assertEquals(new AutoLimits(4096, 4), limits);
        for (int n = 2; n <= 9; n++)
        {
            final boolean candidate = automatic(n).choice(Operation.ALL_REDUCE, 8).predictedSeconds()
                .containsKey("fullmesh");
            assertEquals(n <= limits.maxRanks(), candidate, "n = " + n);
        }
        assertTrue(automatic(4).choice(Operation.ALL_REDUCE, limits.maxBytes()).predictedSeconds()
            .containsKey("fullmesh"));
        assertFalse(automatic(4).choice(Operation.ALL_REDUCE, limits.maxBytes() + 1).predictedSeconds()
            .containsKey("fullmesh"));
    }

    /** An algorithm that claims to cost nothing: the cost model would take it everywhere but for its limits. */
    private static final class Free implements AllReduceAlgorithm, CostedAlgorithm
    {
        @Override
        public String name()
        {
            return "free";
        }

        @Override
        public void allReduce(
            final PeerGroup group, final ByteBuffer send, final ByteBuffer recv, final int count, final DataType type,
            final Reducer reducer)
        {
            throw new AssertionError("the test only asks the selector to choose it; nothing runs it");
        }

        @Override
        public double predictSeconds(final Operation operation, final int worldSize, final long bytes,
            final CostParameters cost)
        {
            return 0;
        }

        @Override
        public boolean canRun(final Operation operation, final int worldSize, final long bytes)
        {
            return bytes != 64;
        }
    }

    @Test
    void aRegisteredAlgorithmIsChosenWithinItsLimitsOnly()
    {
        final AlgorithmCatalog catalog = AlgorithmCatalog.standard();
        catalog.register("free", new Free(), new AutoLimits(1024, 8));
        for (final int n : new int[] {2, 8, 9})
        {
            final AlgorithmSelector selector = new AlgorithmSelector(catalog, AlgoOverride.parse(null, catalog),
                RankLayout.singleNode(n), false, LinkCosts.DEFAULTS, false);
            assertEquals(n <= 8, "free".equals(selector.allReduce(null, 1024).name()), "n = " + n);
            assertFalse("free".equals(selector.allReduce(null, 2048).name()), "n = " + n);
            // Where the algorithm says it cannot run, the model passes it over.
            assertFalse("free".equals(selector.allReduce(null, 64).name()), "n = " + n);
            // It is the catalog's, not the installed one's.
            assertNull(CATALOG.find(Operation.ALL_REDUCE, "free", AllReduceAlgorithm.class));
        }
    }

    @Test
    void registrationRefusesClashesNonAlgorithmsAndLateComers()
    {
        final AlgorithmCatalog catalog = AlgorithmCatalog.standard();
        final IllegalStateException clash = assertThrows(IllegalStateException.class,
            () -> catalog.register("Ring", new Free(), AutoLimits.NONE));
        assertTrue(clash.getMessage().contains("two algorithms named Ring for allReduce"), clash.getMessage());
        assertThrows(IllegalArgumentException.class, () -> catalog.register("x", () -> "x", AutoLimits.NONE));
        final IllegalStateException sealed = assertThrows(IllegalStateException.class,
            () -> CATALOG.register("late", new Free(), AutoLimits.NONE));
        assertTrue(sealed.getMessage().contains("AlgorithmPlugin"), sealed.getMessage());
    }

    @Test
    @SuppressWarnings("deprecation")
    void pluginsCompiledAgainstTheUntypedRegistrationStillRegister()
    {
        final AlgorithmCatalog catalog = AlgorithmCatalog.standard();
        final Object free = new Free();
        catalog.register("free", free, AutoLimits.NONE); // the register(String, Object, AutoLimits) of older plug-ins
        assertSame(free, catalog.find(Operation.ALL_REDUCE, "free", AllReduceAlgorithm.class));
        final Object notAnAlgorithm = "a string";
        assertThrows(IllegalArgumentException.class, () -> catalog.register("y", notAnAlgorithm, AutoLimits.NONE));
    }

    @Test
    void theAccountOfAChoiceGivesEveryCostedCandidatesPrediction()
    {
        final AlgorithmChoice choice = automatic(4).choice(Operation.ALL_REDUCE, MIB);
        final String text = choice.describe();
        for (final String name : CATALOG.namesFor(Operation.ALL_REDUCE))
        {
            final CostedAlgorithm costed = CATALOG.find(Operation.ALL_REDUCE, name, CostedAlgorithm.class);
            // Not weighed: hierarchical on one node, fullmesh above its limit, the arena where none is shared.
            final boolean candidate = !name.equals("hierarchical") && !name.equals("fullmesh") && costed != null &&
                !costed.needsNodeArena();
            assertEquals(candidate, text.contains(name + " "), name + " in: " + text);
        }
        assertEquals(true, text.startsWith("H-D_R (cost model: "), text);
        assertEquals(true, text.matches(".*ring \\d+\\.\\d+ (us|ms).*"), text);
        assertEquals(true, choice.model().contains("1 node x 4 ranks"), choice.model());
        assertEquals(true, choice.model().contains("defaults"), choice.model());
    }
}
