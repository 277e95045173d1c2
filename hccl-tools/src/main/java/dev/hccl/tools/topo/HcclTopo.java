package dev.hccl.tools.topo;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.tools.ToolCommand;
import dev.hccl.tools.SizeConverter;
import dev.hccl.tools.launch.CpuPlacement;
import dev.hccl.tools.launch.HcclRun;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * {@code hccl-topo}: the ranks of a job and the class of the path between each pair, as {@code nvidia-smi topo -m}
 * prints it for GPUs. Every rank runs it, started by a launcher:
 * <pre>
 * bin/hcclrun -np 4 hccl-topo --probe
 * </pre>
 * Each rank creates its communicator from the environment ({@link Hccl#init}) and contributes its record (one
 * allGather); rank 0 prints the report and writes {@code --json}. Only the public API is used.
 * <p>
 * Exit status: 0; 1 when an operation fails or the JSON file cannot be written; 2 on a usage error.
 */
@Command(name = "hccl-topo",
    mixinStandardHelpOptions = true,
    version = "hccl-topo " + HcclRun.VERSION,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {
        "Prints the ranks of a job (host, node, local rank, process id) and a matrix of the link class between "
            + "every pair of ranks, as nvidia-smi topo -m does for GPUs: X for a rank itself, SHM for two ranks "
            + "on one node that talk through shared memory, LOC for two on one node over TCP loopback, NET for two "
            + "nodes (the network). Every rank of the job runs it; "
            + "rank 0 prints.",
        ""},
    footer = {
        "",
        "--probe measures every ordered pair of ranks, one pair at a time (every rank waits at a barrier while a "
            + "pair is measured): latency is half the median of --latency-iters 8-byte round trips, bandwidth the "
            + "bytes over the median time of --bandwidth-iters transfers of --probe-bytes (each acknowledged by 8 "
            + "bytes). A link whose bandwidth is below --degraded-ratio times the median of its class (SHM, LOC or NET) "
            + "is listed as degraded.",
        "",
        "Exit status: 0 OK; 1 a failed operation or an unwritable file; 2 a usage error.",
        "",
        "Example: bin/hcclrun -np 4 hccl-topo --probe --json topo.json",
        "Placement: bin/hccl-topo -np 2 --bind-to core --library-cores 1"})
public final class HcclTopo implements Callable<Integer>
{
    /** Exit status: success. */
    public static final int OK = 0;

    /** Exit status: an operation failed or a file could not be written. */
    public static final int FAILED = 1;

    /** Exit status: a usage error. */
    public static final int USAGE = ToolCommand.USAGE;


    @Spec
    private CommandSpec spec;

    @Option(names = "--probe", description = "Also measure every pair's latency and bandwidth, and list the "
        + "degraded links.")
    private boolean probe;

    @Option(names = "--probe-bytes", paramLabel = "SIZE", defaultValue = "4M",
        converter = SizeConverter.class,
        description = "Bytes per bandwidth transfer, with an optional K, M or G (default: ${DEFAULT-VALUE}).")
    private long probeBytes;

    @Option(names = "--latency-iters", paramLabel = "N", defaultValue = "100",
        description = "Timed 8-byte round trips per pair (default: ${DEFAULT-VALUE}).")
    private int latencyIters;

    @Option(names = "--bandwidth-iters", paramLabel = "M", defaultValue = "10",
        description = "Timed transfers per pair (default: ${DEFAULT-VALUE}).")
    private int bandwidthIters;

    @Option(names = "--degraded-ratio", paramLabel = "R", defaultValue = "0.5",
        description = "A link is degraded when its bandwidth is below R times the median of its class, 0 < R <= 1 "
            + "(default: ${DEFAULT-VALUE}).")
    private double degradedRatio;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the report to FILE as JSON.")
    private Path json;

    @Option(names = "--bind-to", paramLabel = "core|numa|none",
        description = "Print where 'hcclrun -np N --bind-to ... --library-cores L' places its ranks on this machine "
            + "(each local rank's NUMA node, CPUs and library CPUs) and exit; no job is started.")
    private String bindTo;

    @Option(names = {"-np", "--nproc-per-node"}, paramLabel = "N", defaultValue = "1",
        description = "With --bind-to: the local ranks (default: ${DEFAULT-VALUE}).")
    private int placedRanks;

    @Option(names = "--library-cores", paramLabel = "L", defaultValue = "0",
        description = "With --bind-to: cores kept for the library's threads, as hcclrun's (default: ${DEFAULT-VALUE}).")
    private int libraryCores;

    private final Supplier<Communicator> opener;
    private final String address;
    private final PrintStream out;
    private final PrintStream err;

    private HcclTopo(
        final Supplier<Communicator> opener, final String address, final PrintStream out, final PrintStream err)
    {
        this.opener = opener;
        this.address = address;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the tool on this rank and exits the JVM with its status.
     *
     * @param args the command line.
     */
    public static void main(final String[] args)
    {
        ToolCommand.quietLibraryLog();
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the tool on this rank, its communicator created from the environment ({@link Hccl#init}).
     *
     * @param args the command line.
     * @param out  receives the report (rank 0 only) and {@code --help}.
     * @param err  receives usage errors and failures.
     * @return 0 on success, 1 on a failure, 2 on a usage error.
     */
    public static int run(final String[] args, final PrintStream out, final PrintStream err)
    {
        final CommConfig config = environmentConfig();
        // Only rank 0 prints: the others would repeat --help once each.
        final PrintStream printing = config == null || config.rank() == 0 ?
            out : new PrintStream(OutputStream.nullOutputStream());
        return run(args, Hccl::init, config == null ? null : config.ifIp(), printing, err);
    }

    /**
     * Runs the tool on this rank with the communicator {@code opener} creates: how ranks as threads run it.
     *
     * @param args    the command line.
     * @param opener  creates this rank's communicator, which the tool closes.
     * @param address the address this rank was configured to listen on, or null.
     * @param out     receives the report if this is rank 0, and {@code --help}.
     * @param err     receives usage errors and failures.
     * @return the exit status, as {@link #run(String[], PrintStream, PrintStream)}.
     */
    public static int run(
        final String[] args, final Supplier<Communicator> opener, final String address, final PrintStream out,
        final PrintStream err)
    {
        return ToolCommand.execute("hccl-topo", new HcclTopo(opener, address, out, err), args, out, err);
    }

    /**
     * Checks the options, gathers the records, probes and reports; picocli calls this after parsing.
     *
     * @return the exit status.
     */
    @Override
    public Integer call()
    {
        checkOptions();
        if (bindTo != null)
        {
            return placement();
        }
        final Communicator comm;
        try
        {
            comm = opener.get();
        }
        catch (final RuntimeException ex)
        {
            err.println("hccl-topo: cannot create the communicator: " + ex.getMessage());
            return ex instanceof IllegalArgumentException ? USAGE : FAILED;
        }
        final TopoReport report;
        final boolean printing;
        try (comm)
        {
            printing = comm.rank() == 0;
            final List<RankRecord> ranks = RankRecord.gather(comm, address);
            final boolean[][] sharedMemory = PairTransports.sharedMemory(comm);
            final Probe measured = probe ? new PairProbe(comm, (int)probeBytes, latencyIters, bandwidthIters).run() :
                null;
            report = TopoReport.of(ranks, sharedMemory, measured, degradedRatio);
        }
        catch (final RuntimeException ex)
        {
            err.println("hccl-topo: rank " + comm.rank() + ": " + ex.getMessage());
            return FAILED;
        }
        if (!printing)
        {
            return OK;
        }
        TopoFormatter.lines(report).forEach(out::println);
        if (json != null)
        {
            try
            {
                writeJson(json, report);
            }
            catch (final IOException ex)
            {
                err.println("hccl-topo: cannot write " + json + ": " + ex);
                return FAILED;
            }
        }
        return OK;
    }

    /** Prints hcclrun's placement on this machine, computed by hcclrun's own code. */
    private int placement()
    {
        if (placedRanks < 1)
        {
            throw new ParameterException(spec.commandLine(), "-np must be at least 1, got " + placedRanks);
        }
        try
        {
            CpuPlacement.describe(bindTo, placedRanks, libraryCores).forEach(out::println);
            return OK;
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ParameterException(spec.commandLine(), ex.getMessage());
        }
        catch (final IOException ex)
        {
            err.println("hccl-topo: --bind-to " + bindTo + ": " + ex.getMessage() + " (placement needs Linux's /sys)");
            return FAILED;
        }
    }

    /**
     * Writes a report as one JSON document.
     *
     * @param file   the file, replaced if it exists; missing parent directories are created.
     * @param report the report.
     * @throws IOException when the file cannot be written.
     */
    public static void writeJson(final Path file, final TopoReport report) throws IOException
    {
        final Path parent = file.toAbsolutePath().getParent();
        if (parent != null)
        {
            Files.createDirectories(parent);
        }
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), report);
    }

    private void checkOptions()
    {
        if (probeBytes < 1 || probeBytes > Integer.MAX_VALUE - 8)
        {
            throw new ParameterException(spec.commandLine(),
                "--probe-bytes must be from 1 byte to 2 GiB, got " + probeBytes);
        }
        if (latencyIters < 1)
        {
            throw new ParameterException(spec.commandLine(), "--latency-iters must be at least 1, got " + latencyIters);
        }
        if (bandwidthIters < 1)
        {
            throw new ParameterException(spec.commandLine(),
                "--bandwidth-iters must be at least 1, got " + bandwidthIters);
        }
        if (!(degradedRatio > 0 && degradedRatio <= 1))
        {
            throw new ParameterException(spec.commandLine(),
                "--degraded-ratio must be above 0 and at most 1, got " + degradedRatio);
        }
    }

    /**
     * This process's configuration as the launcher's variables say, before any communicator exists; null when they
     * say nothing readable (the communicator's creation then reports what is wrong).
     */
    private static CommConfig environmentConfig()
    {
        try
        {
            return CommConfig.builder().conclude();
        }
        catch (final RuntimeException ex)
        {
            return null;
        }
    }
}
