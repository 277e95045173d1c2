package dev.hccl.tools.launch;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.CpuList;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
        final CpuPlacement placement = CpuPlacement.probe(sys, CpuList.parse("0-7"));
        assertEquals(List.of("0,4", "2,6", "1,5", "3,7", "0,4"), placement.cpuLists(CpuPlacement.Mode.CORE, 5));
        assertEquals(List.of("0-1,4-5", "2-3,6-7", "0-1,4-5"), placement.cpuLists(CpuPlacement.Mode.NUMA, 3));
    }

    @Test
    void onlyTheCpusTheLauncherMayUseCount() throws Exception
    {
        twoNodes();
        final CpuPlacement placement = CpuPlacement.probe(sys, CpuList.parse("0-2,4"));
        assertEquals(List.of("0,4", "2", "1", "0,4"), placement.cpuLists(CpuPlacement.Mode.CORE, 4));
        assertEquals(List.of("0-1,4", "2"), placement.cpuLists(CpuPlacement.Mode.NUMA, 2));
    }

    @Test
    void aKernelWithoutNumaIsOneNode() throws Exception
    {
        write("devices/system/cpu/online", "0-3\n");
        assertEquals(List.of("0", "1", "2", "3", "0"),
            CpuPlacement.probe(sys, CpuList.parse("0-3")).cpuLists(CpuPlacement.Mode.CORE, 5));
    }

    @Test
    void realRanksBoundToCoresRunEachOnACoreOfTheirOwn() throws Exception
    {
        final Launches.Result r = Launches.launch("-np", "2", "--bind-to", "core", "sh", "-c",
            "grep Cpus_allowed_list /proc/self/status");
        assertEquals(0, r.status(), r.err());
        final TreeSet<Integer> allowed = CpuList.allowed();
        final String[] seen = new String[2];
        for (final String line : r.out().lines().toList())
        {
            final int rank = line.charAt(1) - '0';
            seen[rank] = line.substring(line.indexOf(':') + 1).trim();
        }
        for (final String cpus : seen)
        {
            assertTrue(cpus != null && allowed.containsAll(CpuList.parse(cpus)), r.out());
        }
        // Each rank runs where the placement put it: this machine's first two cores (the same one, on one core).
        assertEquals(CpuPlacement.probe(Path.of("/sys"), allowed).cpuLists(CpuPlacement.Mode.CORE, 2),
            List.of(seen), r.out());
    }

    @Test
    void libraryCoresAreEachNodesLastAndEachRankGetsThoseOfItsNode() throws Exception
    {
        twoNodes();
        final CpuPlacement placement = CpuPlacement.probe(sys, CpuList.parse("0-7"));
        assertEquals(new CpuPlacement.Plan(List.of("0,4", "2,6"), List.of(0, 1), List.of("1,5", "3,7")),
            placement.plan(CpuPlacement.Mode.CORE, 2, 2));
        // One kept core, on node 0: node 1's rank has none of its own node and gets it.
        assertEquals(new CpuPlacement.Plan(List.of("0,4", "2,6", "3,7"), List.of(0, 1, 1),
            List.of("1,5", "1,5", "1,5")), placement.plan(CpuPlacement.Mode.CORE, 3, 1));
        assertEquals(new CpuPlacement.Plan(List.of("0,4", "2-3,6-7"), List.of(0, 1), List.of("1,5", "1,5")),
            placement.plan(CpuPlacement.Mode.NUMA, 2, 1));
        assertEquals(List.of(), placement.plan(CpuPlacement.Mode.CORE, 2, 0).libraryCpus());
    }

    @Test
    void tooFewCoresForTheRanksAndTheLibrarySaysWhatToChange() throws Exception
    {
        twoNodes();
        final CpuPlacement placement = CpuPlacement.probe(sys, CpuList.parse("0-7"));
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> placement.plan(CpuPlacement.Mode.CORE, 4, 1));
        assertEquals("--library-cores 1 with --bind-to core needs 5 cores for 4 rank(s), but 4 may be used here (CPUs "
            + "0-7); lower the ranks (-np, --nproc-per-node) or --library-cores, or run without it", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> placement.plan(CpuPlacement.Mode.NUMA, 2, 4));
        assertEquals(List.of("0,4", "2,6", "3,7"), placement.plan(CpuPlacement.Mode.CORE, 3, 1).rankCpus());
        final IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
            () -> CpuPlacement.onThisMachine("none", 1, 1));
        assertTrue(none.getMessage().contains("--library-cores 1 needs --bind-to core"), none.getMessage());
        final Launches.Result r = Launches.launch("-np", "1", "--library-cores", "1", "true");
        assertEquals(2, r.status(), r.err());
        assertTrue(r.err().contains("--library-cores 1 needs --bind-to core"), r.err());
    }

    /** Whether this machine has a core for a rank and one for the library. */
    private static boolean twoCores()
    {
        try
        {
            CpuPlacement.onThisMachine("core", 1, 1);
            return true;
        }
        catch (final Exception ex)
        {
            return false;
        }
    }

    @Test
    void aRealRanksLibraryThreadsRunOnTheKeptCoreAndItsMainThreadOnItsOwn() throws Exception
    {
        Assumptions.assumeTrue(twoCores(), "needs two cores this process may use");
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Launches.Result r = Launches.launch("-np", "1", "--bind-to", "core", "--library-cores", "1",
            java, "-Xmx128m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
            System.getProperty("java.class.path"), PlacedRank.class.getName());
        assertEquals(0, r.status(), r.out() + r.err());
        final CpuPlacement.Plan plan = CpuPlacement.onThisMachine("core", 1, 1);
        assertTrue(r.out().contains("[0] HCCL_LIBRARY_CPUS " + plan.libraryCpus().get(0) + "\n"), r.out());
        assertTrue(r.out().contains("[0] main " + plan.rankCpus().get(0) + "\n"), r.out());
        final List<String> library = r.out().lines().filter(l -> l.startsWith("[0] hccl-")).toList();
        assertTrue(library.stream().anyMatch(l -> l.startsWith("[0] hccl-stream")), r.out());
        for (final String line : library)
        {
            assertEquals(plan.libraryCpus().get(0), line.substring(line.lastIndexOf(' ') + 1), r.out());
        }
    }

    @Test
    void realRanksBoundToCoresOfTheirOwnSpinWhileTheyWait() throws Exception
    {
        Assumptions.assumeTrue(twoCores(), "needs two cores this process may use");
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Launches.Result r = Launches.launch("-np", "2", "--bind-to", "core", java, "-Xmx128m",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-Dorg.slf4j.simpleLogger.log.dev.hccl.core.CommunicatorImpl=debug", "-cp",
            System.getProperty("java.class.path"), PlacedRank.class.getName());
        assertEquals(0, r.status(), r.out() + r.err());
        // Each process sees one CPU, but no other rank may run on it: a core each, so the waits spin.
        for (int rank = 0; rank < 2; rank++)
        {
            final String said = "rank " + rank + ": waits spin, yield, then sleep (1 rank may run on its 1 CPU)";
            assertTrue((r.out() + r.err()).contains(said), r.out() + r.err());
        }
    }

    /**
     * A rank that creates its communicator, runs an all-reduce, and prints the CPUs of its main thread and of each of
     * its library threads ({@code /proc/self/task/*}: {@code comm}, {@code Cpus_allowed_list}), once each library
     * thread has had time to pin itself (it does as it starts, beside the caller); without {@code HCCL_LIBRARY_CPUS}
     * at once.
     */
    public static final class PlacedRank
    {
        public static void main(final String[] args) throws Exception
        {
            try (Communicator comm = Hccl.init(CommConfig.builder().conclude()))
            {
                comm.allReduce(new float[]{1f}, ReduceOp.SUM);
                final String main = cpus(Path.of("/proc/thread-self"));
                Map<String, String> threads = Map.of();
                for (long until = System.nanoTime() + 10_000_000_000L; System.nanoTime() < until; Thread.sleep(50))
                {
                    threads = libraryThreads();
                    final String library = System.getenv("HCCL_LIBRARY_CPUS");
                    if (null == library || threads.values().stream().allMatch(library::equals))
                    {
                        break;
                    }
                }
                System.out.println("HCCL_LIBRARY_CPUS " + System.getenv("HCCL_LIBRARY_CPUS"));
                System.out.println("main " + main);
                threads.forEach((name, cpus) -> System.out.println(name + " " + cpus));
            }
        }

        private static Map<String, String> libraryThreads() throws Exception
        {
            final Map<String, String> threads = new java.util.TreeMap<>();
            try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc/self/task")))
            {
                for (final Path task : tasks.toList())
                {
                    try
                    {
                        final String name = Files.readString(task.resolve("comm")).trim();
                        if (name.startsWith("hccl-"))
                        {
                            threads.put(name + "/" + task.getFileName(), cpus(task));
                        }
                    }
                    catch (final java.nio.file.NoSuchFileException ended)
                    {
                        // A thread (the JVM's, a short-lived one of the library) ended after the listing.
                    }
                }
            }
            return threads;
        }

        private static String cpus(final Path task) throws Exception
        {
            for (final String line : Files.readAllLines(task.resolve("status")))
            {
                if (line.startsWith("Cpus_allowed_list:"))
                {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
            throw new IllegalStateException("no Cpus_allowed_list in " + task);
        }
    }
}
