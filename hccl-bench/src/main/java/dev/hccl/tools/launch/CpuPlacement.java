package dev.hccl.tools.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Where {@code hcclrun --bind-to} puts a node's ranks, as Open MPI's {@code --bind-to}: each rank on a core of its own
 * (all of the core's hardware threads), or on a NUMA node, the local ranks spread over the NUMA nodes first (rank 0 on
 * node 0, rank 1 on node 1, ...), round-robin when there are more ranks than places. Only the CPUs the launcher may
 * run on count (its own affinity, a container's or a batch system's cpuset). Read from Linux's {@code /sys}; applied
 * with {@code taskset}, so nothing native ships.
 */
final class CpuPlacement
{
    /** What a rank is bound to. */
    enum Mode
    {
        /** Inherit the launcher's affinity. */
        NONE,
        /** A physical core, with its hardware threads. */
        CORE,
        /** A NUMA node's CPUs. */
        NUMA
    }

    /** Each NUMA node's cores, each core its allowed hardware threads; nodes and cores in order. */
    private final List<List<TreeSet<Integer>>> nodes;

    private CpuPlacement(final List<List<TreeSet<Integer>>> nodes)
    {
        this.nodes = nodes;
    }

    /**
     * This machine's cores and NUMA nodes, as far as the launcher may use them.
     *
     * @param sys     {@code /sys}.
     * @param allowed the CPUs this process may run on ({@code Cpus_allowed_list} of {@code /proc/self/status}).
     * @return the placement.
     * @throws IOException when {@code /sys} does not say (not Linux).
     */
    static CpuPlacement probe(final Path sys, final TreeSet<Integer> allowed) throws IOException
    {
        final Path nodeDir = sys.resolve("devices/system/node");
        final Map<Integer, TreeSet<Integer>> nodeCpus = new TreeMap<>();
        if (Files.isDirectory(nodeDir))
        {
            try (Stream<Path> entries = Files.list(nodeDir))
            {
                for (final Path n : entries.filter(p -> p.getFileName().toString().matches("node\\d+")).toList())
                {
                    nodeCpus.put(Integer.parseInt(n.getFileName().toString().substring(4)),
                        parse(Files.readString(n.resolve("cpulist"))));
                }
            }
        }
        if (nodeCpus.isEmpty()) // a kernel without NUMA: one node of every CPU
        {
            nodeCpus.put(0, parse(Files.readString(sys.resolve("devices/system/cpu/online"))));
        }
        final List<List<TreeSet<Integer>>> nodes = new ArrayList<>();
        for (final TreeSet<Integer> cpus : nodeCpus.values())
        {
            final Map<String, TreeSet<Integer>> cores = new LinkedHashMap<>();
            for (final int cpu : cpus)
            {
                if (allowed.contains(cpu))
                {
                    final Path siblings =
                        sys.resolve("devices/system/cpu/cpu" + cpu + "/topology/thread_siblings_list");
                    final String key =
                        Files.exists(siblings) ? Files.readString(siblings).trim() : Integer.toString(cpu);
                    cores.computeIfAbsent(key, k -> new TreeSet<>()).add(cpu);
                }
            }
            if (!cores.isEmpty())
            {
                nodes.add(new ArrayList<>(cores.values()));
            }
        }
        if (nodes.isEmpty())
        {
            throw new IOException("none of the CPUs this process may use (" + format(allowed) + ") is in " + nodeDir);
        }
        return new CpuPlacement(nodes);
    }

    /**
     * The CPUs of each of a node's ranks.
     *
     * @param mode  what to bind to; not {@link Mode#NONE}.
     * @param ranks the ranks of the node.
     * @return each local rank's CPU list, in {@code taskset}'s format ({@code 0-3,8}).
     */
    List<String> cpuLists(final Mode mode, final int ranks)
    {
        final List<TreeSet<Integer>> places = new ArrayList<>();
        if (mode == Mode.NUMA)
        {
            for (final List<TreeSet<Integer>> node : nodes)
            {
                places.add(node.stream().flatMap(TreeSet::stream).collect(Collectors.toCollection(TreeSet::new)));
            }
        }
        else
        {
            // Cores taken from the nodes in turn: consecutive ranks land on different NUMA nodes.
            for (int i = 0; places.size() < nodes.stream().mapToInt(List::size).sum(); i++)
            {
                for (final List<TreeSet<Integer>> node : nodes)
                {
                    if (i < node.size())
                    {
                        places.add(node.get(i));
                    }
                }
            }
        }
        final List<String> lists = new ArrayList<>(ranks);
        for (int r = 0; r < ranks; r++)
        {
            lists.add(format(places.get(r % places.size())));
        }
        return lists;
    }

    /**
     * Parses a CPU list as Linux writes it ({@code 0-3,8,10-11}).
     *
     * @param list the list.
     * @return the CPUs.
     */
    static TreeSet<Integer> parse(final String list)
    {
        final TreeSet<Integer> cpus = new TreeSet<>();
        for (final String part : list.trim().split(","))
        {
            if (part.isEmpty())
            {
                continue;
            }
            final int dash = part.indexOf('-');
            final int first = Integer.parseInt(dash < 0 ? part : part.substring(0, dash));
            final int last = dash < 0 ? first : Integer.parseInt(part.substring(dash + 1));
            for (int c = first; c <= last; c++)
            {
                cpus.add(c);
            }
        }
        return cpus;
    }

    /** A CPU set in Linux's list format, runs joined by dashes. */
    static String format(final TreeSet<Integer> cpus)
    {
        final List<String> runs = new ArrayList<>();
        int start = -1;
        int previous = -1;
        for (final int c : cpus)
        {
            if (start >= 0 && c == previous + 1)
            {
                previous = c;
                continue;
            }
            if (start >= 0)
            {
                runs.add(start == previous ? Integer.toString(start) : start + "-" + previous);
            }
            start = c;
            previous = c;
        }
        if (start >= 0)
        {
            runs.add(start == previous ? Integer.toString(start) : start + "-" + previous);
        }
        return String.join(",", runs);
    }

    /**
     * The CPUs this process may run on.
     *
     * @return them, from {@code /proc/self/status}.
     * @throws IOException when it cannot be read (not Linux).
     */
    static TreeSet<Integer> allowed() throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
        {
            if (line.startsWith("Cpus_allowed_list:"))
            {
                return parse(line.substring(line.indexOf(':') + 1));
            }
        }
        throw new IOException("/proc/self/status has no Cpus_allowed_list");
    }
}
