package dev.hccl.tools.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code --netns}: parsing, the command each rank gets and its local numbering. Needs neither root nor ip. */
class NetnsPlacementTest
{
    @Test
    @Timeout(10)
    void aListGivesEachRankItsNamespace()
    {
        assertEquals(List.of("a", "b", "a"), NetnsPlacement.parse("a,b,a", 3));
        assertEquals(List.of("hccl-node0"), NetnsPlacement.parse("hccl-node0", 1));
    }

    @Test
    @Timeout(10)
    void aPatternPutsKConsecutiveRanksInEachNamespace()
    {
        assertEquals(List.of("hccl-node0", "hccl-node0", "hccl-node1", "hccl-node1"),
                NetnsPlacement.parse("hccl-node%d:2", 4));
        assertEquals(List.of("n0x", "n1x", "n2x"), NetnsPlacement.parse("n%dx:1", 3));
        // Uneven: the last namespace gets what is left.
        assertEquals(List.of("node0", "node0", "node0", "node1", "node1"), NetnsPlacement.parse("node%d:3", 5));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
        "a,b|3|--netns lists 2 namespace(s) for 3 ranks; give one per rank, or PATTERN:K for K ranks per namespace",
        "a,,b|3|--netns 'a,,b': '' is not a namespace name (letters, digits, '.', '_', '-')",
        "a/b|1|--netns 'a/b': 'a/b' is not a namespace name (letters, digits, '.', '_', '-')",
        "..|1|--netns '..': '..' is not a namespace name (letters, digits, '.', '_', '-')",
        "node%d:0|2|--netns ranks per namespace must be at least 1, not 0",
        "node:2|2|--netns pattern 'node' must contain %d exactly once and no other %, as in hccl-node%d:2",
        "n%d%d:2|2|--netns pattern 'n%d%d' must contain %d exactly once and no other %, as in hccl-node%d:2",
        "n%s%d:2|2|--netns pattern 'n%s%d' must contain %d exactly once and no other %, as in hccl-node%d:2",
        "n%d:99999999999|2|--netns ranks per namespace is too large: 99999999999",
        "n%d:x|2|--netns 'n%d:x': 'n%d:x' is not a namespace name (letters, digits, '.', '_', '-')",
    })
    @Timeout(10)
    void badSpecsAreRefusedNamingTheProblem(final String spec, final int ranks, final String message)
    {
        final IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> NetnsPlacement.parse(spec, ranks));
        assertEquals(message, e.getMessage());
    }

    @Test
    @Timeout(10)
    void eachRankCommandIsWrappedInIpNetnsExec()
    {
        final LaunchPlan plan = new LaunchPlan(List.of("java", "-cp", "x.jar", "Main"), 4, "10.77.0.1", null,
                Duration.ofSeconds(5), true, NetnsPlacement.parse("hccl-node%d:2", 4));

        assertEquals(List.of("ip", "netns", "exec", "hccl-node0", "java", "-cp", "x.jar", "Main"), plan.commandOf(1));
        assertEquals(List.of("ip", "netns", "exec", "hccl-node1", "java", "-cp", "x.jar", "Main"), plan.commandOf(2));
        assertEquals(List.of(0, 1, 0, 1), List.of(plan.localRank(0), plan.localRank(1), plan.localRank(2),
                plan.localRank(3)));
        assertEquals(List.of(2, 2, 2, 2), List.of(plan.localSize(0), plan.localSize(1), plan.localSize(2),
                plan.localSize(3)));
    }

    @Test
    @Timeout(10)
    void localNumberingFollowsTheNamespacesEvenWhenNotContiguous()
    {
        final LaunchPlan plan = new LaunchPlan(List.of("true"), 5, "10.77.0.1", null, Duration.ZERO, false,
                NetnsPlacement.parse("a,b,a,a,b", 5));

        assertEquals(List.of(0, 0, 1, 2, 1), List.of(plan.localRank(0), plan.localRank(1), plan.localRank(2),
                plan.localRank(3), plan.localRank(4)));
        assertEquals(List.of(3, 2, 3, 3, 2), List.of(plan.localSize(0), plan.localSize(1), plan.localSize(2),
                plan.localSize(3), plan.localSize(4)));
    }

    @Test
    @Timeout(10)
    void withoutNamespacesTheCommandIsUnchangedAndAllRanksAreLocal()
    {
        final LaunchPlan plan = new LaunchPlan(List.of("sh", "-c", "true"), 3, "127.0.0.1", null, Duration.ZERO,
                true, List.of());

        assertEquals(List.of("sh", "-c", "true"), plan.commandOf(2));
        assertEquals(2, plan.localRank(2));
        assertEquals(3, plan.localSize(0));
    }

    @Test
    @Timeout(10)
    void aPlanRefusesANamespaceListOfTheWrongLength()
    {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new LaunchPlan(
                List.of("true"), 3, "127.0.0.1", null, Duration.ZERO, true, List.of("a", "b")));
        assertEquals("2 namespaces for 3 ranks", e.getMessage());
    }

    @Test
    @Timeout(10)
    void rankZerosAddressIsTheFirstIpv4AddressIpLists()
    {
        final String output = "2: eth0    inet 10.77.0.1/24 scope global eth0\\       valid_lft forever "
                + "preferred_lft forever\n3: eth1    inet 192.168.5.2/16 brd 192.168.255.255 scope global eth1\n";

        assertEquals("10.77.0.1", NetnsPlacement.firstIpv4(output));
        assertNull(NetnsPlacement.firstIpv4(""));
        assertNull(NetnsPlacement.firstIpv4("2: eth0    inet6 fe80::1/64 scope link"));
    }
}
