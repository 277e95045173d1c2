package dev.hccl.tools.launch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --bind-to}'s placement over a made-up {@code /sys}: two NUMA nodes of two cores of two hardware threads,
 * cores spread over the nodes first, NUMA nodes in turn, only the allowed CPUs; and on this machine, real ranks each on
 * a core of their own.
 */
class CpuPlacementTest
{
    @TempDir
    Path sys;

    /** node0: cores {0,4} and {1,5}; node1: cores {2,6} and {3,7}. */
    private void twoNodes() throws Exception
    {
        write("devices/system/node/node0/cpulist", "0-1,4-5\n");
        write("devices/system/node/node1/cpulist", "2-3,6-7\n");
        final Map<Integer, String> siblings = Map.of(0, "0,4", 4, "0,4", 1, "1,5", 5, "1,5", 2, "2,6", 6, "2,6",
            3, "3,7", 7, "3,7");
        for (final Map.Entry<Integer, String> e : siblings.entrySet())
        {
            write("devices/system/cpu/cpu" + e.getKey() + "/topology/thread_siblings_list", e.getValue() + "\n");
        }
    }

    private void write(final String file, final String text) throws Exception
    {
        final Path p = sys.resolve(file);
        Files.createDirectories(p.getParent());
        Files.writeString(p, text);
    }

    @Test
    void coresAreSpreadOverTheNumaNodesFirstThenRoundRobin() throws Exception
    {
        twoNodes();
        final CpuPlacement placement = CpuPlacement.probe(sys, CpuPlacement.parse("0-7"));
        assertEquals(List.of("0,4", "2,6", "1,5", "3,7", "0,4"), placement.cpuLists(CpuPlacement.Mode.CORE, 5));
        assertEquals(List.of("0-1,4-5", "2-3,6-7", "0-1,4-5"), placement.cpuLists(CpuPlacement.Mode.NUMA, 3));
    }

    @Test
    void onlyTheCpusTheLauncherMayUseCount() throws Exception
    {
        twoNodes();
        final CpuPlacement placement = CpuPlacement.probe(sys, CpuPlacement.parse("0-2,4"));
        assertEquals(List.of("0,4", "2", "1", "0,4"), placement.cpuLists(CpuPlacement.Mode.CORE, 4));
        assertEquals(List.of("0-1,4", "2"), placement.cpuLists(CpuPlacement.Mode.NUMA, 2));
    }

    @Test
    void aKernelWithoutNumaIsOneNode() throws Exception
    {
        write("devices/system/cpu/online", "0-3\n");
        assertEquals(List.of("0", "1", "2", "3", "0"),
            CpuPlacement.probe(sys, CpuPlacement.parse("0-3")).cpuLists(CpuPlacement.Mode.CORE, 5));
    }

    @Test
    void cpuListsParseAndFormatAsLinuxWritesThem()
    {
        final TreeSet<Integer> cpus = CpuPlacement.parse("0-3,8,10-11\n");
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), List.copyOf(cpus));
        assertEquals("0-3,8,10-11", CpuPlacement.format(cpus));
    }

    @Test
    void realRanksBoundToCoresRunEachOnACoreOfTheirOwn() throws Exception
    {
        final Launches.Result r = Launches.launch("-np", "2", "--bind-to", "core", "sh", "-c",
            "grep Cpus_allowed_list /proc/self/status");
        assertEquals(0, r.status(), r.err());
        final TreeSet<Integer> allowed = CpuPlacement.allowed();
        final String[] seen = new String[2];
        for (final String line : r.out().lines().toList())
        {
            final int rank = line.charAt(1) - '0';
            seen[rank] = line.substring(line.indexOf(':') + 1).trim();
        }
        for (final String cpus : seen)
        {
            assertTrue(cpus != null && allowed.containsAll(CpuPlacement.parse(cpus)), r.out());
        }
        // Each rank runs where the placement put it: this machine's first two cores (the same one, on one core).
        assertEquals(CpuPlacement.probe(Path.of("/sys"), allowed).cpuLists(CpuPlacement.Mode.CORE, 2),
            List.of(seen), r.out());
    }
}
