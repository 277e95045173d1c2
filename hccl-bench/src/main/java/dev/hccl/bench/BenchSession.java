package dev.hccl.bench;

import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.AlgorithmChoice;
import dev.hccl.api.Communicator;
import dev.hccl.api.Operation;
import dev.hccl.tools.ToolCommand;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One {@code hccl-bench} run on this rank: a communicator and a sweep per algorithm, rank 0's printing and files, and
 * the exit status, which every rank reaches alike (times and wrong counts are combined across ranks).
 */
final class BenchSession
{
    /** Every result right, and fast enough. */
    static final int OK = 0;
    /** A wrong result, a failed operation or an unwritable file. */
    static final int FAILED = 1;
    /** The command line cannot be run. */
    static final int USAGE = ToolCommand.USAGE;
    /** The average bus bandwidth of a sweep is below {@code --min-bw}. */
    static final int TOO_SLOW = 3;

    private final BenchOptions options;
    private final CommunicatorFactory factory;
    private final PrintStream out;
    private final PrintStream err;

    BenchSession(
        final BenchOptions options, final CommunicatorFactory factory, final PrintStream out, final PrintStream err)
    {
        this.options = options;
        this.factory = factory;
        this.out = out;
        this.err = err;
    }

    int run()
    {
        final List<String> labels = options.algoLabels();
        final List<Sweep> sweeps = new ArrayList<>();
        final Map<String, String> legend = new HashMap<>();
        List<RankInfo> ranks = List.of();
        String transport = "unknown";
        int status = OK;
        for (int i = 0; i < labels.size(); i++)
        {
            final String algo = options.algos().isEmpty() ? null : labels.get(i);
            final Communicator comm;
            try
            {
                comm = factory.open(algo);
            }
            catch (final RuntimeException ex)
            {
                err.println("hccl-bench: cannot create the communicator" + (algo == null ? "" : " for --algo " + algo) +
                    ": " + ex.getMessage());
                // A setting the library refuses (an unknown --algo name, say) is a usage error, like a bad flag.
                return ex instanceof IllegalArgumentException ? USAGE : FAILED;
            }
            try (comm)
            {
                final boolean leader = comm.rank() == 0;
                final PrintStream table = leader ? out : null;
                if (i == 0)
                {
                    transport = comm.transports();
                    ranks = RankInfo.gather(comm);
                    final String problem = options.problemWith(comm.worldSize());
                    if (problem != null)
                    {
                        if (leader)
                        {
                            err.println("hccl-bench: " + problem);
                        }
                        comm.barrier(); // so that no rank's early exit stops rank 0 before it says why
                        return USAGE;
                    }
                    if (table != null)
                    {
                        preamble(comm.worldSize(), transport, ranks).forEach(table::println);
                    }
                }
                if (table != null)
                {
                    if (algo != null)
                    {
                        table.println("# Algorithm: " + algo + " (CommConfig.algo)");
                    }
                    final List<AlgorithmChoice> changes = changes(comm);
                    choices(changes).forEach(table::println);
                    legend.put(labels.get(i), AlgorithmLegend.name(labels.get(i), changes));
                    Table.header().forEach(table::println);
                    table.flush();
                }
                final Sweep sweep = new BenchRunner(comm, options, labels.get(i), table).run();
                sweeps.add(sweep);
                status = worse(status, verdict(sweep));
                if (table != null)
                {
                    Table.footer(sweep.outOfBounds(), sweep.avgBusBw(), options.minBw()).forEach(table::println);
                    table.flush();
                }
                if (leader && i == labels.size() - 1)
                {
                    final BenchReport report = new BenchReport("hccl-bench", options.op().cliName(), comm.worldSize(),
                        transport, BenchReport.Settings.of(options), ranks, sweeps, status);
                    status = worse(status, writeFiles(report, legend));
                }
                // Rank 0 prints and writes before any rank leaves: a launcher stops the whole job as soon as one rank
                // exits non-zero, which would cut rank 0's output short.
                comm.barrier();
            }
            catch (final RuntimeException ex)
            {
                err.println("hccl-bench: rank " + comm.rank() + ": " + ex.getMessage());
                return FAILED;
            }
        }
        return status;
    }

    /**
     * Which algorithm runs at each size of the sweep and why ({@link Communicator#algorithmFor}): the choice at the
     * first size and at each size where the algorithm, or whether it was forced, changes.
     *
     * @return the choices, smallest size first; empty for an operation without algorithms (sendrecv, barrier).
     */
    List<AlgorithmChoice> changes(final Communicator comm)
    {
        final List<AlgorithmChoice> changes = new ArrayList<>();
        final Operation op = options.op().operation();
        if (op == null)
        {
            return changes;
        }
        AlgorithmChoice previous = null;
        for (final long size : options.sizes())
        {
            final AlgorithmChoice choice = comm.algorithmFor(op, size);
            if (previous == null || previous.forced() != choice.forced() ||
                !previous.algorithm().equals(choice.algorithm()))
            {
                changes.add(choice);
                previous = choice;
            }
        }
        return changes;
    }

    /**
     * The {@link #changes} as comment lines above the table: the cost model's layout and link figures once, then a
     * line at each size where the choice changes, with every candidate's predicted time there.
     */
    static List<String> choices(final List<AlgorithmChoice> changes)
    {
        final List<String> lines = new ArrayList<>();
        for (final AlgorithmChoice choice : changes)
        {
            if (lines.isEmpty())
            {
                lines.add("# Cost model: " + choice.model());
            }
            lines.add(String.format(Locale.ROOT, "# from %d B: %s", choice.bytes(), choice.describe()));
        }
        return lines;
    }

    /**
     * The lines above the table: nccl-tests' {@code # nThread 1 nGpus 1 minBytes ...} and {@code # Using devices}
     * with ranks and transport in place of threads and GPUs.
     */
    List<String> preamble(final int worldSize, final String transport, final List<RankInfo> ranks)
    {
        final List<String> lines = new ArrayList<>();
        lines.add("# Collective test starting: hccl-bench " + options.op().cliName());
        lines.add(String.format(Locale.ROOT,
            "# nRanks %d transport %s minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d " +
                "validation: %d average: %d registered: %d",
            worldSize, transport, options.minBytes(), options.maxBytes(),
            options.stepFactor() > 1 ? options.stepFactor() : options.stepBytes(),
            options.stepFactor() > 1 ? "factor" : "bytes", options.warmupIters(), options.iters(), options.check(),
            options.average(), options.registered() ? 1 : 0));
        if (options.settle())
        {
            lines.add("# Warm-up: " + Settling.DESCRIPTION + " before each timed run; -w N runs N instead");
        }
        if (options.timeForMinimum())
        {
            lines.add("# Timed: " + TimedOperations.description(options));
        }
        lines.add("#");
        lines.add("# Using ranks");
        ranks.forEach(r -> lines.add(r.headerLine()));
        // This rank's; every rank of a launch runs the same JVM with the same flags.
        lines.add("# Reduction kernels: " + Reducers.description());
        lines.add("# Copies between native memory: " + Copies.description());
        lines.add("#");
        return lines;
    }

    private int verdict(final Sweep sweep)
    {
        if (sweep.outOfBounds() != 0)
        {
            return FAILED;
        }
        return options.minBw() != null && sweep.avgBusBw() < options.minBw() ? TOO_SLOW : OK;
    }

    /**
     * The status that reports both: a failure outranks low bandwidth.
     */
    static int worse(final int a, final int b)
    {
        return a == FAILED || b == FAILED ? FAILED : Math.max(a, b);
    }

    /**
     * Writes the {@code --json}, {@code --csv} and {@code --plot} files (rank 0 only), the plot's lines named by
     * {@code legend}, and prints where the plot went: a relative {@code --plot} path is easily looked for in the
     * wrong directory when a launcher starts ranks elsewhere.
     */
    private int writeFiles(final BenchReport report, final Map<String, String> legend)
    {
        int status = OK;
        try
        {
            if (options.json() != null)
            {
                ReportFiles.writeJson(options.json(), report);
            }
            if (options.csv() != null)
            {
                ReportFiles.writeCsv(options.csv(), report);
            }
            if (options.plot() != null)
            {
                BandwidthPlot.write(options.plot(), report, options.plotStyle(), legend);
                out.println("# Plot written to " + options.plot().toAbsolutePath().normalize());
                out.flush();
            }
        }
        catch (final Exception ex)
        {
            err.println("hccl-bench: cannot write the report: " + ex);
            status = FAILED;
        }
        return status;
    }
}
