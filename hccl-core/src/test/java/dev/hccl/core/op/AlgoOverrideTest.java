package dev.hccl.core.op;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.api.Operation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * HCCL_ALGO's three forms, the levels, and the refusals with the valid names.
 */
class AlgoOverrideTest
{
    private static final AlgorithmCatalog CATALOG = InstalledAlgorithms.catalog();

    private static String forced(final String spec, final Operation op, final boolean multiNode)
    {
        return AlgoOverride.parse(spec, CATALOG).forced(op, multiNode, CATALOG);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "NA", "level0:NA;level1:NA"})
    void unsetOrNaIsAutomaticEverywhere(final String spec)
    {
        for (final Operation op : Operation.values())
        {
            assertNull(forced(spec, op, false), spec + " " + op);
            assertNull(forced(spec, op, true), spec + " " + op);
        }
        assertNull(AlgoOverride.parse(null, CATALOG).forced(Operation.ALL_REDUCE, false, CATALOG));
    }

    @Test
    void aBareNameForcesEveryOperationItImplementsAndLeavesTheRestAutomatic()
    {
        assertEquals("ring", forced("ring", Operation.ALL_REDUCE, false));
        assertEquals("ring", forced("RING", Operation.ALL_GATHER, true));
        assertEquals("ring", forced("ring", Operation.REDUCE_SCATTER, false));
        assertNull(forced("ring", Operation.ALL_TO_ALL, false), "the ring has no all-to-all");
        assertEquals("fullmesh", forced("FullMesh", Operation.ALL_REDUCE, false));
        assertNull(forced("fullmesh", Operation.BROADCAST, false));
    }

    @Test
    void levelZeroDecidesOnOneNodeAndLevelOneAcrossNodes()
    {
        final String spec = "level0:fullmesh;level1:ring";
        assertEquals("fullmesh", forced(spec, Operation.ALL_REDUCE, false));
        assertEquals("ring", forced(spec, Operation.ALL_REDUCE, true));
        assertNull(forced("level1:ring", Operation.ALL_REDUCE, false), "level0 unset on one node: automatic");
        assertEquals("ring", forced("level1:ring", Operation.ALL_REDUCE, true));
    }

    @Test
    void perOperationEntriesApplyToTheirOperationOnly()
    {
        final String spec = "allreduce=level0:NA;level1:ring/all_gather=ring/broadcast=level0:tree";
        assertNull(forced(spec, Operation.ALL_REDUCE, false));
        assertEquals("ring", forced(spec, Operation.ALL_REDUCE, true));
        assertEquals("ring", forced(spec, Operation.ALL_GATHER, false));
        assertEquals("tree", forced(spec, Operation.BROADCAST, false));
        assertNull(forced(spec, Operation.REDUCE_SCATTER, false), "not named: automatic");
    }

    @Test
    void anUnknownNameIsRefusedWithTheValidOnes()
    {
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> AlgoOverride.parse("rign", CATALOG));
        assertTrue(ex.getMessage().contains("HCCL_ALGO 'rign'"), ex.getMessage());
        assertTrue(ex.getMessage().contains("unknown algorithm 'rign'"), ex.getMessage());
        for (final String name : CATALOG.names())
        {
            assertTrue(ex.getMessage().contains(name), ex.getMessage());
        }
    }

    @Test
    void aNameTheOperationLacksIsRefusedWithThatOperationsNames()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> AlgoOverride.parse("alltoall=ring", CATALOG));
        assertTrue(ex.getMessage().contains("'ring' does not implement alltoall"), ex.getMessage());
        assertTrue(ex.getMessage().contains("valid: pairwise, NA"), ex.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"level2:ring", "level0=ring", "allreduce=ring/allreduce=fullmesh", "frobnicate=ring",
        "level0:ring;level0:fullmesh", "allreduce=ring/ring", "level0:rign"})
    void malformedSpecsAreRefusedNamingTheVariable(final String spec)
    {
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> AlgoOverride.parse(spec, CATALOG));
        assertTrue(ex.getMessage().startsWith("HCCL_ALGO '" + spec + "': "), ex.getMessage());
    }

    /**
     * The ranks compare the parsed override at the rendezvous: texts that force the same algorithms agree whatever
     * their spelling, and texts that force different ones (or the same name bare and per level, which compose
     * differently across nodes) do not. The canonical form parses back to the same override.
     */
    @Test
    void textsThatForceTheSameAgreeByValueAndTheirCanonicalFormParsesBack()
    {
        final String[][] same = {
            {"", "NA", " na ", "level0:NA;level1:NA", "allreduce=NA"},
            {"ring", " RING "},
            {"level0:NA;level1:ring", "level1:Ring;level0:na"},
            {"allreduce = RING", "all_reduce=ring", "AllReduce=ring/allgather=NA"},
            {"allreduce=ring/allgather=NB", "allgather=nb/all_reduce=ring"}};
        for (final String[] group : same)
        {
            final AlgoOverride first = AlgoOverride.parse(group[0], CATALOG);
            for (final String spec : group)
            {
                final AlgoOverride parsed = AlgoOverride.parse(spec, CATALOG);
                assertEquals(first, parsed, spec + " against " + group[0]);
                assertEquals(first.canonical(), parsed.canonical(), spec + " against " + group[0]);
                assertEquals(parsed, AlgoOverride.parse(parsed.canonical(), CATALOG), parsed.canonical());
            }
        }
        final String[] different = {"", "ring", "level0:ring;level1:ring", "level0:NA;level1:ring", "fullmesh",
            "allreduce=ring", "allgather=ring", "allreduce=H-D_R"};
        for (int i = 0; i < different.length; i++)
        {
            for (int j = i + 1; j < different.length; j++)
            {
                final AlgoOverride a = AlgoOverride.parse(different[i], CATALOG);
                final AlgoOverride b = AlgoOverride.parse(different[j], CATALOG);
                assertNotEquals(a.canonical(), b.canonical(), different[i] + " and " + different[j]);
                assertNotEquals(a, b, different[i] + " and " + different[j]);
            }
        }
    }
}
