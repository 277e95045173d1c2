package dev.hccl.tools.topo;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The degraded-link rule on synthetic measurements: each class against its own median.
 */
class DegradedLinksTest
{
    /** Two nodes of two ranks: 0 and 1 on host a, 2 and 3 on host b. */
    private static final List<RankRecord> TWO_BY_TWO = List.of(
        new RankRecord(0, "a", 0, "a-id", 0, 1, ""),
        new RankRecord(1, "a", 0, "a-id", 1, 2, ""),
        new RankRecord(2, "b", 1, "b-id", 0, 3, ""),
        new RankRecord(3, "b", 1, "b-id", 1, 4, ""));

    @Test
    void aLinkMadeSlowOnPurposeIsTheOnlyOneFlagged()
    {
        // Within a node 10 GB/s, between nodes 1 GB/s, and 3 -> 0 at 0.4: slow for the network.
        final double[][] bw = byClass(10, 1);
        bw[3][0] = 0.4;

        final List<DegradedLink> degraded = find(bw, 0.5);

        assertEquals(List.of(new DegradedLink(3, "b", 0, "a", LinkClass.NET, 0.4, 1.0)), degraded);
    }

    @Test
    void theNetworkIsNotDegradedForBeingSlowerThanTheNode()
    {
        assertEquals(List.of(), find(byClass(10, 0.01), 0.5));
    }

    @Test
    void aSlowLinkWithinANodeIsJudgedAgainstTheNodesLinks()
    {
        final double[][] bw = byClass(10, 1);
        // Still faster than any network link, but a fifth of its own class.
        bw[1][0] = 2;

        final List<DegradedLink> degraded = find(bw, 0.5);

        assertEquals(List.of(new DegradedLink(1, "a", 0, "a", LinkClass.LOC, 2, 10)), degraded);
    }

    @Test
    void aLinkAtExactlyTheRatioIsNotDegradedAndTheRatioIsTheThreshold()
    {
        final double[][] bw = byClass(10, 1);
        bw[0][1] = 5;

        assertEquals(List.of(), find(bw, 0.5));
        assertEquals(1, find(bw, 0.51).size());
    }

    @Test
    void classMediansCountEveryOrderedPairOfTheClass()
    {
        final double[][] bw = byClass(10, 1);
        bw[0][1] = 2;
        bw[1][0] = 4;

        final Map<LinkClass, Double> medians = DegradedLinks.classMedians(links(), Probe.matrix(bw));

        // LOC: 2, 4, 10, 10 -> 7; NET: eight links at 1.
        assertEquals(Map.of(LinkClass.LOC, 7.0, LinkClass.NET, 1.0), medians);
    }

    @Test
    void medianOfOddAndEvenCounts()
    {
        assertEquals(3.0, DegradedLinks.median(new double[]{5, 1, 3}));
        assertEquals(2.5, DegradedLinks.median(new double[]{4, 1, 3, 2}));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> DegradedLinks.median(new double[0]))
            .getMessage().contains("no values"));
    }

    private static List<DegradedLink> find(final double[][] bw, final double ratio)
    {
        return DegradedLinks.find(TWO_BY_TWO, links(), Probe.matrix(bw), ratio);
    }

    private static List<List<LinkClass>> links()
    {
        final List<List<LinkClass>> links = new ArrayList<>();
        for (final RankRecord a : TWO_BY_TWO)
        {
            final List<LinkClass> row = new ArrayList<>();
            for (final RankRecord b : TWO_BY_TWO)
            {
                row.add(LinkClass.of(a.rank(), a.node(), b.rank(), b.node()));
            }
            links.add(row);
        }
        return links;
    }

    private static double[][] byClass(final double local, final double net)
    {
        final double[][] bw = new double[4][4];
        for (int from = 0; from < 4; from++)
        {
            for (int to = 0; to < 4; to++)
            {
                bw[from][to] = from / 2 == to / 2 ? local : net;
            }
        }
        return bw;
    }
}
