package dev.hccl.algorithms;

import dev.hccl.api.Operation;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DoubleBinaryTreeAlgorithmTest
{
    private static final int MAX_WORLD = 130;

    @Test
    void bothTreesSpanEveryRankAndAgreeWithThemselves()
    {
        for (int n = 1; n <= MAX_WORLD; n++)
        {
            for (int t = 0; t < 2; t++)
            {
                int roots = 0;
                int edges = 0;
                for (int r = 0; r < n; r++)
                {
                    final DoubleBinaryTreeAlgorithm.Node node = DoubleBinaryTreeAlgorithm.node(t, r, n);
                    if (node.parent() < 0)
                    {
                        roots++;
                    }
                    else
                    {
                        final int[] siblings = DoubleBinaryTreeAlgorithm.node(t, node.parent(), n).children();
                        final int rank = r;
                        assertTrue(Arrays.stream(siblings).anyMatch(c -> c == rank),
                            "n=" + n + " tree " + t + ": rank " + r + " missing among its parent's children");
                    }
                    assertTrue(node.children().length <= 2, "n=" + n + " tree " + t + " rank " + r);
                    edges += node.children().length;
                }
                assertEquals(1, roots, "n=" + n + " tree " + t + " roots");
                assertEquals(n - 1, edges, "n=" + n + " tree " + t + " edges");
            }
        }
    }

    @Test
    void noRankIsInteriorInBothTreesForEvenWorlds()
    {
        for (int n = 2; n <= MAX_WORLD; n += 2)
        {
            for (int r = 0; r < n; r++)
            {
                final boolean interior0 = DoubleBinaryTreeAlgorithm.node(0, r, n).children().length > 0;
                final boolean interior1 = DoubleBinaryTreeAlgorithm.node(1, r, n).children().length > 0;
                assertFalse(interior0 && interior1, "n=" + n + ": rank " + r + " is interior in both trees");
            }
        }
    }

    @Test
    void depthIsLogarithmic()
    {
        assertEquals(0, DoubleBinaryTreeAlgorithm.depth(1));
        assertEquals(1, DoubleBinaryTreeAlgorithm.depth(2));
        assertEquals(3, DoubleBinaryTreeAlgorithm.depth(8)); // 0 - 4 - 2 - 1
        for (int n = 2; n <= MAX_WORLD; n++)
        {
            final int log = 32 - Integer.numberOfLeadingZeros(n - 1);
            assertTrue(DoubleBinaryTreeAlgorithm.depth(n) <= log + 1, "n=" + n);
        }
    }

    @Test
    void predictsOnlyAllReduce()
    {
        final DoubleBinaryTreeAlgorithm tree = new DoubleBinaryTreeAlgorithm();
        final CostParameters cost = new CostParameters(1e-5, 1e-9, 1e-10);
        assertEquals(2 * 3 * 1e-5 + 2 * 1000 * 1e-9 + 1000 * 1e-10,
            tree.predictSeconds(Operation.ALL_REDUCE, 8, 1000, cost), 1e-15);
        assertThrows(IllegalArgumentException.class,
            () -> tree.predictSeconds(Operation.BROADCAST, 8, 1000, cost));
    }
}
