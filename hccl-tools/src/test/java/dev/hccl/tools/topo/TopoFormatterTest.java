package dev.hccl.tools.topo;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The printed report from synthetic records and measurements: two ranks on one node and one on another.
 */
class TopoFormatterTest
{
    static final List<RankRecord> RANKS = List.of(
        new RankRecord(0, "alpha", 0, "alpha/boot-a/ns-1", 0, 101, "10.0.0.1"),
        new RankRecord(1, "alpha", 0, "alpha/boot-a/ns-1", 1, 102, ""),
        new RankRecord(2, "beta", 1, "beta/boot-b/ns-1", 0, 20003, "10.0.0.2"));

    @Test
    void withoutProbeTheHeaderTheMatrixAndTheLegend()
    {
        final List<String> lines = TopoFormatter.lines(TopoReport.of(RANKS, null, 0.5));

        assertEquals(List.of(
            "hccl-topo: 3 ranks on 2 nodes",
            "",
            "Rank  Host   Node  Local rank    Pid  Address",
            "   0  alpha     0           0    101  10.0.0.1",
            "   1  alpha     0           1    102  -",
            "   2  beta      1           0  20003  10.0.0.2",
            "",
            "Node  Ranks  Identity",
            "   0  0,1    alpha/boot-a/ns-1",
            "   1  2      beta/boot-b/ns-1",
            "",
            "     R0   R1   R2",
            "R0    X  LOC  NET",
            "R1  LOC    X  NET",
            "R2  NET  NET    X",
            "",
            "Legend:",
            "",
            "  X    = Self",
            "  SHM  = Same node: the ranks reach each other through shared memory",
            "  LOC  = Same node, not through shared memory: TCP loopback, or threads of one JVM",
            "  NET  = Different nodes: the ranks reach each other over the network between the nodes"), lines);
    }

    @Test
    void aPairThatTalksThroughSharedMemoryIsShmAndOneOnTheSameNodeOverTcpIsLoc()
    {
        // Ranks 0 and 1 share a node; rank 0 reaches rank 1 through shared memory, rank 1 sees the same pair (the
        // choice is the pair's); a pair across nodes is NET whatever the transport says.
        final boolean[][] sharedMemory = {{false, true, true}, {true, false, false}, {true, false, false}};
        final List<String> lines = TopoFormatter.lines(TopoReport.of(RANKS, sharedMemory, null, 0.5));
        final int head = lines.indexOf("     R0   R1   R2");
        assertEquals(List.of("R0    X  SHM  NET", "R1  SHM    X  NET", "R2  NET  NET    X"),
            lines.subList(head + 1, head + 4));
        final boolean[][] none = new boolean[3][3];
        assertEquals("R0    X  LOC  NET", TopoFormatter.lines(TopoReport.of(RANKS, none, null, 0.5)).get(head + 1));
    }

    @Test
    void withProbeTheTwoMatricesAndTheDegradedLinkByRankAndHost()
    {
        // Every column as wide as the widest cell, as nvidia-smi's matrix.
        final double[][] latency = {{0, 1.25, 30.5}, {1.5, 0, 31}, {29.75, 30.25, 0}};
        // 1 -> 2 is slow on purpose: a quarter of the other network links.
        final double[][] bandwidth = {{0, 12.5, 1.0}, {12.25, 0, 0.25}, {1.0, 1.0, 0}};
        final Probe probe = new Probe(4096, 5, 3, Probe.matrix(latency), Probe.matrix(bandwidth));

        final List<String> lines = TopoFormatter.lines(TopoReport.of(RANKS, probe, 0.5));

        final int at = lines.indexOf("Latency (us): half the median of 5 8-byte round trips, from row to column");
        assertTrue(at > 0, String.join("\n", lines));
        assertEquals(List.of(
            "Latency (us): half the median of 5 8-byte round trips, from row to column",
            "",
            "      R0    R1    R2",
            "R0     X  1.25  30.5",
            "R1   1.5     X    31",
            "R2  29.8  30.3     X",
            "",
            "Bandwidth (GB/s): median of 3 transfers of 4096 bytes, from row to column",
            "",
            "      R0    R1    R2",
            "R0     X  12.5     1",
            "R1  12.3     X  0.25",
            "R2     1     1     X",
            "",
            "Degraded links (bandwidth below 0.50 of the median of their class):",
            "",
            "  degraded: rank 1 (alpha) -> rank 2 (beta): NET 0.25 GB/s, NET median 1 GB/s"),
            lines.subList(at, lines.size()));
    }

    @Test
    void noDegradedLinkSaysNone()
    {
        final double[][] flat = {{0, 2, 2}, {2, 0, 2}, {2, 2, 0}};
        final Probe probe = new Probe(8, 1, 1, Probe.matrix(flat), Probe.matrix(flat));

        final List<String> lines = TopoFormatter.lines(TopoReport.of(RANKS, probe, 0.5));

        assertEquals("Degraded links (bandwidth below 0.50 of the median of their class): none",
            lines.get(lines.size() - 1));
        assertTrue(lines.stream().noneMatch(l -> l.contains(TopoFormatter.DEGRADED)), String.join("\n", lines));
    }

    @Test
    void measurementsKeepThreeSignificantDigitsWithoutExponents()
    {
        assertEquals(List.of("0.00235", "12300", "1230", "0", "0.1"), List.of(TopoFormatter.number(0.0023456),
            TopoFormatter.number(12345.4), TopoFormatter.number(1234.5), TopoFormatter.number(0),
            TopoFormatter.number(0.1)));
    }

    @Test
    void oneRankIsOneCell()
    {
        final List<String> lines = TopoFormatter.lines(TopoReport.of(
            List.of(new RankRecord(0, "solo", 0, "solo-id", 0, 7, "")), null, 0.5));

        assertEquals("hccl-topo: 1 rank on 1 node", lines.get(0));
        final int at = lines.indexOf("    R0");
        assertTrue(at > 0, String.join("\n", lines));
        assertEquals("R0   X", lines.get(at + 1));
    }
}
