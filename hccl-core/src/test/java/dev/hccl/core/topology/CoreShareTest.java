package dev.hccl.core.topology;

import dev.hccl.api.spi.BackoffWait;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

class CoreShareTest
{
    /** Ranks in rank order: node id and published CPUs. */
    private static StaticTopology ranks(final String... nodeAndCpus)
    {
        final List<StaticTopology.Place> places = new ArrayList<>();
        for (final String rank : nodeAndCpus)
        {
            final String[] parts = rank.split("@", -1);
            places.add(new StaticTopology.Place(parts[0], "host-" + parts[0], "eth0", "10.0.0.1", parts[1]));
        }
        return new StaticTopology(places);
    }

    @Test
    void ranksBoundToCoresOfTheirOwnEachHaveOneThoughEachProcessSeesOneCpu()
    {
        final StaticTopology bound = ranks("a@0", "a@1");
        assertEquals(new CoreShare(1, 1), CoreShare.of(bound, 0, 1));
        assertEquals(new CoreShare(1, 1), CoreShare.of(bound, 1, 1));
        final CoreShare share = CoreShare.of(bound, 0, 1);
        assertSame(BackoffWait.forNode(1, 1), BackoffWait.forNode(share.ranks(), share.cores()));
        assertEquals(BackoffWait.SPIN_NANOS, BackoffWait.forNode(share.ranks(), share.cores()).spinNanos(),
            "a rank bound to a core of its own spins");
    }

    @Test
    void ranksInOneSetShareAllOfIt()
    {
        assertEquals(new CoreShare(2, 2), CoreShare.of(ranks("a@0-1", "a@0-1"), 1, 2));
        final CoreShare oneCpu = CoreShare.of(ranks("a@0", "a@0"), 0, 1);
        assertEquals(new CoreShare(2, 1), oneCpu);
        assertEquals(0, BackoffWait.forNode(oneCpu.ranks(), oneCpu.cores()).spinNanos(),
            "two ranks in a cpuset of one CPU must not spin");
    }

    @Test
    void overlappingSetsShareAndOtherNodesDoNot()
    {
        final StaticTopology t = ranks("a@0-1", "a@1-2", "a@3", "b@0-1", "b@0-1");
        assertEquals(new CoreShare(2, 2), CoreShare.of(t, 0, 4));
        assertEquals(new CoreShare(1, 1), CoreShare.of(t, 2, 4));
        assertEquals(new CoreShare(2, 2), CoreShare.of(t, 3, 2));
    }

    @Test
    void unknownCpusCountAsSharing()
    {
        assertEquals(new CoreShare(2, 1), CoreShare.of(ranks("a@0", "a@"), 0, 1), "a peer that published none");
        assertEquals(new CoreShare(2, 1), CoreShare.of(ranks("a@0", "a@not-a-list"), 0, 1), "one that does not parse");
        assertEquals(new CoreShare(2, 1), CoreShare.of(ranks("a@0", "a@5-2147483647"), 0, 1), "one out of bounds");
        assertEquals(new CoreShare(3, 8), CoreShare.of(ranks("a@", "a@1", "a@2"), 0, 8),
            "a rank that published none: the node's ranks against the JVM's CPUs, as before");
        assertEquals(new CoreShare(2, 1), CoreShare.of(StaticTopology.singleNode(2, "a", "host-a"), 0, 1),
            "ranks as threads of one JVM");
    }

    @Test
    void aJvmAllowedFewerCpusThanItsSetCountsTheWholeNode()
    {
        assertEquals(new CoreShare(2, 1), CoreShare.of(ranks("a@0-3", "a@4-7"), 0, 1),
            "a CPU quota of one: the set's four CPUs are not the JVM's to spin on");
    }
}
