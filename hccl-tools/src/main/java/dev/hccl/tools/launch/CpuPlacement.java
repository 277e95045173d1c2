package dev.hccl.tools.launch;

import dev.hccl.api.spi.CpuList;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
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
 * <p>
 * With {@code --library-cores N} the last core of each NUMA node in turn (then the one before it, ...) is kept from
 * the ranks for the library's own threads ({@code HCCL_LIBRARY_CPUS}): the last, because ranks are placed from the
 * first and the kernel keeps its own housekeeping and interrupts on the first CPUs by habit; on every node, so that
 * a rank's I/O threads touch its buffers from its own node, which is where each rank's library CPUs are when that
 * node has some. {@code hccl-topo --bind-to} prints what this gives.
 */
public final class CpuPlacement
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

    /**
     * Where a node's ranks go.
     *
     * @param rankCpus    each local rank's CPUs, in {@code taskset}'s format.
     * @param rankNodes   each local rank's NUMA node.
     * @param libraryCpus each local rank's {@code HCCL_LIBRARY_CPUS}, or empty when no cores are kept for them.
     */
    record Plan(List<String> rankCpus, List<Integer> rankNodes, List<String> libraryCpus)
    {
    }

    /** Each NUMA node's cores, each core its allowed hardware threads; nodes and cores in order. */
    private final List<List<TreeSet<Integer>>> nodes;
    /** Each of {@link #nodes}' NUMA node number. */
    private final List<Integer> nodeIds;

    private CpuPlacement(final List<List<TreeSet<Integer>>> nodes, final List<Integer> nodeIds)
    {
        this.nodes = nodes;
        this.nodeIds = nodeIds;
    }

    /**
     * What {@code hcclrun --bind-to MODE --library-cores N} gives a node's ranks on this machine.
     *
     * @param bindTo       {@code core}, {@code numa} or {@code none}.
     * @param ranks        the ranks of this node.
     * @param libraryCores the cores kept for the library's threads, 0 for none.
     * @return the plan; null for {@code none}: the ranks keep the launcher's CPUs.
     * @throws IllegalArgumentException when an option is wrong, saying what to change.
     * @throws IOException              when this machine's {@code /sys} does not say (not Linux).
     */
    static Plan onThisMachine(final String bindTo, final int ranks, final int libraryCores) throws IOException
    {
        final Mode mode;
        try
        {
            mode = Mode.valueOf(bindTo.toUpperCase(Locale.ROOT));
        }
        catch (final IllegalArgumentException e)
        {
            throw new IllegalArgumentException("--bind-to takes core, numa or none, not " + bindTo, e);
        }
        if (libraryCores < 0)
        {
            throw new IllegalArgumentException("--library-cores must be at least 0, not " + libraryCores);
        }
        if (mode == Mode.NONE)
        {
            if (libraryCores > 0)
            {
                throw new IllegalArgumentException("--library-cores " + libraryCores + " needs --bind-to core (or "
                    + "numa): the ranks must be kept off the library's cores");
            }
            return null;
        }
        return probe(Path.of("/sys"), CpuList.allowed()).plan(mode, ranks, libraryCores);
    }

    /**
     * {@link #onThisMachine} as a table, for {@code hccl-topo}: each local rank's NUMA node, CPUs and library CPUs.
     *
     * @param bindTo       as {@link #onThisMachine}.
     * @param ranks        as {@link #onThisMachine}.
     * @param libraryCores as {@link #onThisMachine}.
     * @return the lines.
     * @throws IllegalArgumentException when an option is wrong, saying what to change.
     * @throws IOException              when this machine's {@code /sys} does not say (not Linux).
     */
    public static List<String> describe(final String bindTo, final int ranks, final int libraryCores)
        throws IOException
    {
        final Plan plan = onThisMachine(bindTo, ranks, libraryCores);
        final String allowed = CpuList.format(CpuList.allowed());
        final List<String> lines = new ArrayList<>();
        lines.add("Placement of " + ranks + " local rank(s) by hcclrun --bind-to " + bindTo
            + (libraryCores > 0 ? " --library-cores " + libraryCores : "") + " (CPUs hcclrun may use: " + allowed
            + ")");
        final String row = "%-10s  %-9s  %-16s  %s";
        lines.add(String.format(Locale.ROOT, row, "local rank", "NUMA node", "CPUs", "library CPUs").trim());
        for (int r = 0; r < ranks; r++)
        {
            lines.add(String.format(Locale.ROOT, row, r, plan == null ? "-" : plan.rankNodes().get(r),
                plan == null ? allowed : plan.rankCpus().get(r),
                plan == null || plan.libraryCpus().isEmpty() ? "(the rank's)" : plan.libraryCpus().get(r)).trim());
        }
        return lines;
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
                        CpuList.parse(Files.readString(n.resolve("cpulist"))));
                }
            }
        }
        if (nodeCpus.isEmpty()) // a kernel without NUMA: one node of every CPU
        {
            nodeCpus.put(0, CpuList.parse(Files.readString(sys.resolve("devices/system/cpu/online"))));
        }
        final List<List<TreeSet<Integer>>> nodes = new ArrayList<>();
        final List<Integer> ids = new ArrayList<>();
        for (final Map.Entry<Integer, TreeSet<Integer>> node : nodeCpus.entrySet())
        {
            final TreeSet<Integer> cpus = node.getValue();
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
                ids.add(node.getKey());
            }
        }
        if (nodes.isEmpty())
        {
            throw new IOException("none of the CPUs this process may use (" + CpuList.format(allowed) + ") is in " +
                nodeDir);
        }
        return new CpuPlacement(nodes, ids);
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
        return plan(mode, ranks, 0).rankCpus();
    }

    /**
     * Where a node's ranks and their library threads go.
     *
     * @param mode          what to bind to; not {@link Mode#NONE}.
     * @param ranks         the ranks of the node.
     * @param libraryCores  cores kept for the library's threads, none of the ranks' own (0 for none).
     * @return the plan.
     * @throws IllegalArgumentException when too few cores are left, with the numbers and what to change.
     */
    Plan plan(final Mode mode, final int ranks, final int libraryCores)
    {
        final int cores = nodes.stream().mapToInt(List::size).sum();
        final int needed = mode == Mode.CORE ? ranks + libraryCores : 1 + libraryCores;
        if (libraryCores > 0 && needed > cores)
        {
            throw new IllegalArgumentException("--library-cores " + libraryCores + " with --bind-to "
                + mode.name().toLowerCase(Locale.ROOT) + " needs " + needed + " cores for " + ranks
                + " rank(s), but " + cores + " may be used here (CPUs " + CpuList.format(allCpus(nodes)) + "); lower "
                + (mode == Mode.CORE ? "the ranks (-np, --nproc-per-node) or " : "") + "--library-cores, or run "
                + "without it");
        }
        // The kept cores: each node's last in turn, then the one before.
        final List<List<TreeSet<Integer>>> left = new ArrayList<>();
        final List<TreeSet<Integer>> kept = new ArrayList<>();
        nodes.forEach(n -> left.add(new ArrayList<>(n)));
        kept.addAll(Collections.nCopies(nodes.size(), null));
        for (int taken = 0; taken < libraryCores; )
        {
            for (int n = 0; n < left.size() && taken < libraryCores; n++)
            {
                if (!left.get(n).isEmpty())
                {
                    final TreeSet<Integer> core = left.get(n).remove(left.get(n).size() - 1);
                    kept.set(n, kept.get(n) == null ? new TreeSet<>(core) : union(kept.get(n), core));
                    taken++;
                }
            }
        }
        // The places of the ranks, each with its node: whole nodes, or cores taken from the nodes in turn, so that
        // consecutive ranks land on different NUMA nodes.
        final List<TreeSet<Integer>> places = new ArrayList<>();
        final List<Integer> placeNodes = new ArrayList<>();
        for (int i = 0; i == 0 || mode == Mode.CORE && places.size() < cores - libraryCores; i++)
        {
            for (int n = 0; n < left.size(); n++)
            {
                if (mode == Mode.NUMA && !left.get(n).isEmpty())
                {
                    places.add(allCpus(List.of(left.get(n))));
                    placeNodes.add(n);
                }
                else if (mode == Mode.CORE && i < left.get(n).size())
                {
                    places.add(left.get(n).get(i));
                    placeNodes.add(n);
                }
            }
        }
        final TreeSet<Integer> allKept = new TreeSet<>();
        kept.stream().filter(Objects::nonNull).forEach(allKept::addAll);
        final List<String> cpus = new ArrayList<>(ranks);
        final List<Integer> rankNodes = new ArrayList<>(ranks);
        final List<String> library = new ArrayList<>(ranks);
        for (int r = 0; r < ranks; r++)
        {
            final int n = placeNodes.get(r % places.size());
            cpus.add(CpuList.format(places.get(r % places.size())));
            rankNodes.add(nodeIds.get(n));
            if (libraryCores > 0)
            {
                library.add(CpuList.format(kept.get(n) != null ? kept.get(n) : allKept));
            }
        }
        return new Plan(cpus, rankNodes, library);
    }

    private static TreeSet<Integer> allCpus(final List<List<TreeSet<Integer>>> nodes)
    {
        final TreeSet<Integer> all = new TreeSet<>();
        nodes.forEach(n -> n.forEach(all::addAll));
        return all;
    }

    private static TreeSet<Integer> union(final TreeSet<Integer> a, final TreeSet<Integer> b)
    {
        final TreeSet<Integer> u = new TreeSet<>(a);
        u.addAll(b);
        return u;
    }
}
