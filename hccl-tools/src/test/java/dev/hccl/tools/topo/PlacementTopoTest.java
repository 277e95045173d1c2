package dev.hccl.tools.topo;

import dev.hccl.api.Communicator;
import dev.hccl.api.spi.CpuList;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code hccl-topo --bind-to}: hcclrun's placement of the local ranks on this machine as a table, without a job; its
 * mistakes are usage errors that say what to change.
 */
class PlacementTopoTest
{
    /** No communicator may be created: the placement needs no job. */
    private static final Supplier<Communicator> NO_JOB = () ->
    {
        throw new IllegalStateException("a communicator was created");
    };

    private record Run(int status, String out, String err)
    {
    }

    private static Run topo(final String... args)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int status = HcclTopo.run(args, NO_JOB, null, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void printsEachLocalRanksNodeCpusAndLibraryCpus() throws Exception
    {
        Assumptions.assumeTrue(Files.isDirectory(Path.of("/sys/devices/system/cpu")), "Linux's /sys");
        Assumptions.assumeTrue(CpuList.allowed().size() >= 2, "two CPUs this process may use");
        final Run r = topo("--bind-to", "core", "-np", "1", "--library-cores", "1");
        assertEquals(0, r.status(), r.err());
        final List<String> lines = r.out().lines().toList();
        assertTrue(lines.get(0).startsWith("Placement of 1 local rank(s) by hcclrun --bind-to core --library-cores 1 "
            + "(CPUs hcclrun may use: "), r.out());
        assertEquals("local rank  NUMA node  CPUs              library CPUs", lines.get(1), r.out());
        assertEquals(3, lines.size(), r.out());
        final String[] row = lines.get(2).trim().split("\\s+");
        assertEquals("0", row[0], r.out());
        assertTrue(row[1].matches("\\d+"), r.out());
        final TreeSet<Integer> rank = CpuList.parse(row[2]);
        final TreeSet<Integer> library = CpuList.parse(row[3]);
        assertTrue(CpuList.allowed().containsAll(rank) && CpuList.allowed().containsAll(library), r.out());
        assertTrue(rank.stream().noneMatch(library::contains), "the library's CPUs are not the rank's: " + r.out());
    }

    @Test
    void withoutBindingTheRanksKeepTheLaunchersCpus() throws Exception
    {
        Assumptions.assumeTrue(Files.isDirectory(Path.of("/sys/devices/system/cpu")), "Linux's /sys");
        final Run r = topo("--bind-to", "none", "-np", "2");
        assertEquals(0, r.status(), r.err());
        final List<String> lines = r.out().lines().toList();
        assertEquals(4, lines.size(), r.out());
        assertTrue(lines.get(3).matches("1\\s+-\\s+\\S+\\s+\\(the rank's\\)"), r.out());
    }

    @Test
    void mistakesAreUsageErrorsThatSayWhatToChange()
    {
        final Run none = topo("--bind-to", "none", "--library-cores", "1");
        assertEquals(HcclTopo.USAGE, none.status());
        assertTrue(none.err().contains("--library-cores 1 needs --bind-to core"), none.err());
        final Run many = topo("--bind-to", "core", "-np", "1", "--library-cores", "100000");
        assertEquals(HcclTopo.USAGE, many.status());
        assertTrue(many.err().contains("needs 100001 cores for 1 rank(s), but "), many.err());
        final Run mode = topo("--bind-to", "socket");
        assertEquals(HcclTopo.USAGE, mode.status());
        assertTrue(mode.err().contains("--bind-to takes core, numa or none, not socket"), mode.err());
    }
}
