package dev.hccl.bench;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.tools.SizeConverter;
import dev.hccl.tools.ToolCommand;
import dev.hccl.tools.launch.HcclRun;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code hccl-bench}: nccl-tests for hccl-java. Every rank of a job runs it, started by a launcher:
 * <pre>
 * bin/hcclrun -np 4 hccl-bench all_reduce -b 8 -e 128M -f 2
 * </pre>
 * Each rank creates its communicator from the environment the launcher sets ({@link Hccl#init}); rank 0 prints
 * nccl-tests' table, column for column, and writes the {@code --json}, {@code --csv} and {@code --plot} files. The
 * flags, the size sweep, the size-to-count conventions, the bus-bandwidth factors and the footer are nccl-tests'.
 * <p>
 * {@code --algo} is forwarded to {@link dev.hccl.api.CommConfigBuilder#algo} with one communicator (and one sweep)
 * per value; what the value does is up to the core's algorithm selection.
 * <p>
 * Exit status: 0; 1 when a result is wrong, an operation fails or a file cannot be written; 2 on a usage error; 3 when
 * a sweep's average bus bandwidth is below {@code --min-bw}.
 */
@Command(name = "hccl-bench",
    mixinStandardHelpOptions = true,
    version = "hccl-bench " + HcclRun.VERSION,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {
        "Measures one hccl-java operation over a sweep of sizes, as nccl-tests do. Every rank of the job runs it; "
            + "rank 0 prints nccl-tests' table (out-of-place, then in-place: time, algbw, busbw, #wrong) and the "
            + "average bus bandwidth.",
        ""},
    footer = {
        "",
        "SIZE is a number of bytes with an optional K, M or G (powers of 1024). Sizes run from -b, times -f (or "
            + "plus -i when -f is 1), while at most -e. As in nccl-tests, the size is each rank's buffer for "
            + "all_reduce, broadcast, reduce and sendrecv, the gathered buffer for all_gather, the input for "
            + "reduce_scatter and the whole buffer for alltoall; busbw = algbw x 2(n-1)/n for all_reduce, "
            + "(n-1)/n for all_gather, reduce_scatter and alltoall, 1 for broadcast, reduce and sendrecv. barrier "
            + "runs once per column and reports time only.",
        "",
        "--algo values go to CommConfig.algo (HCCL_ALGO's grammar), one communicator and sweep each.",
        "",
        "Exit status: 0 OK; 1 a wrong result, a failed operation or an unwritable file; 2 a usage error; "
            + "3 an average bus bandwidth below --min-bw.",
        "",
        "Example: bin/hcclrun -np 4 hccl-bench all_reduce -b 8 -e 128M -f 2"})
public final class HcclBench implements Callable<Integer>
{

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "OPERATION", converter = OpConverter.class,
        completionCandidates = BenchOp.Names.class, description = "What to measure: ${COMPLETION-CANDIDATES}.")
    private BenchOp operation;

    @Option(names = {"-b", "--minbytes"}, paramLabel = "SIZE", defaultValue = "32M", converter = SizeConverter.class,
        description = "First size (default: ${DEFAULT-VALUE}).")
    private long minBytes;

    @Option(names = {"-e", "--maxbytes"}, paramLabel = "SIZE", defaultValue = "32M", converter = SizeConverter.class,
        description = "Last size at most (default: ${DEFAULT-VALUE}).")
    private long maxBytes;

    @Option(names = {"-i", "--stepbytes"}, paramLabel = "SIZE", defaultValue = "1M", converter = SizeConverter.class,
        description = "Increment between sizes when -f is 1 (default: ${DEFAULT-VALUE}).")
    private long stepBytes;

    @Option(names = {"-f", "--stepfactor"}, paramLabel = "N", defaultValue = "1",
        description = "Multiplication factor between sizes; 1 uses -i instead (default: ${DEFAULT-VALUE}).")
    private long stepFactor;

    @Option(names = {"-n", "--iters"}, paramLabel = "N",
        description = "Timed iterations per size. Not given: at least 20, and as many as fill 0.1 s at the size's "
            + "warmed rate, as OSU's benchmarks time more of small messages (the header says so).")
    private Integer iters;

    @Option(names = {"-w", "--warmup_iters"}, paramLabel = "N",
        description = "Untimed iterations at the largest and the smallest size before the sweep, and before each "
            + "timed run. Not given: 5 before the sweep, and before each timed run operations until their time "
            + "settles, as JMH warms up (the header says so).")
    private Integer warmupIters;

    @Option(names = {"-c", "--check"}, paramLabel = "N", defaultValue = "1",
        description = "Checked runs per size, counting wrong elements in #wrong; 0 skips checking "
            + "(default: ${DEFAULT-VALUE}).")
    private int check;

    @Option(names = {"-o", "--op"}, paramLabel = "OP", defaultValue = "sum",
        description = "Reduction: sum, prod, max, min, avg, a comma-separated list of them, or all "
            + "(default: ${DEFAULT-VALUE}).")
    private String reduceOp;

    @Option(names = {"-d", "--datatype"}, paramLabel = "TYPE", defaultValue = "float",
        description = "Data type: int8, uint8, int16, int32, int64, half, float, double, bfloat16, f8e4m3, "
            + "f8e5m2, a comma-separated list of them (f8e4m3,f8e5m2), or all (default: ${DEFAULT-VALUE}).")
    private String dataType;

    @Option(names = {"-r", "--root"}, paramLabel = "ROOT", defaultValue = "0",
        description = "Root of broadcast and reduce; -1 or all for every rank in turn (default: ${DEFAULT-VALUE}).")
    private String root;

    @Option(names = {"-a", "--average"}, paramLabel = "0-3", defaultValue = "1",
        description = "Time reported across ranks: 0 rank 0's, 1 average, 2 minimum, 3 maximum "
            + "(default: ${DEFAULT-VALUE}).")
    private int average;

    @Option(names = {"-z", "--blocking"}, paramLabel = "0/1", defaultValue = "0",
        description = "1: each operation is a blocking call on this thread, as the training loops that wait for "
            + "each result; 0: the -n operations are issued asynchronously, then awaited (default: ${DEFAULT-VALUE}).")
    private int blocking;

    @Option(names = {"-R", "--local_register"}, paramLabel = "0/1/2", defaultValue = "0",
        description = "1 or 2: the send and receive buffers come from Communicator.allocateRegistered, which the "
            + "ranks of a node read in place (registration is always collective here, so nccl-tests' 1 and 2 are "
            + "alike); 0: ordinary direct buffers (default: ${DEFAULT-VALUE}).")
    private int register;

    @Option(names = "--algo", paramLabel = "NAME", split = ",",
        description = "Algorithm(s) to force, comma-separated: one communicator and one sweep each, forwarded as "
            + "CommConfig.algo (HCCL_ALGO's grammar; names in docs/ALGORITHMS.md; an unknown one is a usage error "
            + "that lists the valid ones).")
    private List<String> algos = List.of();

    @Option(names = "--json", paramLabel = "FILE", description = "Also write every result to FILE as JSON.")
    private Path json;

    @Option(names = "--csv", paramLabel = "FILE", description = "Also write every row to FILE as CSV.")
    private Path csv;

    @Option(names = "--plot", paramLabel = "FILE",
        description = "Also plot busbw (or --plot-y) against size to FILE (.png or .svg), one line per algorithm; "
            + "without --algo the line is named by the algorithms the cost model chose, e.g. "
            + "auto (fullmesh < 8 KiB, ring). Rank 0 prints where it wrote.")
    private Path plot;

    @Option(names = "--plot-y", paramLabel = "busbw|time", defaultValue = "busbw",
        description = "What --plot draws against size: out-of-place busbw in GB/s, or time in us "
            + "(default: ${DEFAULT-VALUE}).")
    private String plotY;

    @Option(names = "--plot-y-scale", paramLabel = "linear|log",
        description = "Scale of --plot's y axis (default: log for time, linear for busbw).")
    private String plotYScale;

    @Option(names = "--min-bw", paramLabel = "GB/s",
        description = "Exit with 3 when a sweep's average bus bandwidth is below this.")
    private Double minBw;

    private final CommunicatorFactory factory;
    private final PrintStream out;
    private final PrintStream err;

    private HcclBench(final CommunicatorFactory factory, final PrintStream out, final PrintStream err)
    {
        this.factory = factory;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the benchmark on this rank and exits the JVM with its status.
     *
     * @param args the command line.
     */
    public static void main(final String[] args)
    {
        ToolCommand.quietLibraryLog();
        // Plots are drawn off-screen; there may be no display.
        if (System.getProperty("java.awt.headless") == null)
        {
            System.setProperty("java.awt.headless", "true");
        }
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the benchmark on this rank, its communicator created from the environment ({@link Hccl#init}).
     *
     * @param args the command line.
     * @param out  receives the table (rank 0 only) and {@code --help}.
     * @param err  receives usage errors and failures.
     * @return 0 when every result is right; 1 on a wrong result, a failed operation or an unwritable file; 2 on a
     * usage error; 3 when an average bus bandwidth is below {@code --min-bw}.
     */
    public static int run(final String[] args, final PrintStream out, final PrintStream err)
    {
        // Only rank 0 prints: the others would repeat --help once each.
        final PrintStream printing = environmentRank() == 0 ? out : new PrintStream(OutputStream.nullOutputStream());
        return run(args, HcclBench::openFromEnvironment, printing, err);
    }

    /**
     * Runs the benchmark on this rank with communicators from {@code factory}: how ranks as threads run it.
     *
     * @param args    the command line.
     * @param factory creates this rank's communicator per sweep.
     * @param out     receives the table if this is rank 0, and {@code --help}.
     * @param err     receives usage errors and failures.
     * @return the exit status, as {@link #run(String[], PrintStream, PrintStream)}.
     */
    public static int run(
        final String[] args, final CommunicatorFactory factory, final PrintStream out, final PrintStream err)
    {
        return ToolCommand.execute("hccl-bench", new HcclBench(factory, out, err), args, out, err);
    }

    /**
     * Parses a command line without running anything, for tests and tools.
     *
     * @param args the command line.
     * @return the checked options.
     * @throws ParameterException       when picocli rejects the command line.
     * @throws IllegalArgumentException when a value is out of range.
     */
    public static BenchOptions parse(final String... args)
    {
        final PrintStream nowhere = new PrintStream(OutputStream.nullOutputStream());
        final HcclBench command = new HcclBench(null, nowhere, nowhere);
        new CommandLine(command).parseArgs(args);
        return command.options();
    }

    /**
     * Checks the options and runs the session; picocli calls this after parsing.
     *
     * @return the exit status.
     */
    @Override
    public Integer call()
    {
        final BenchOptions options;
        try
        {
            options = options();
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ParameterException(spec.commandLine(), ex.getMessage(), ex);
        }
        return new BenchSession(options, factory, out, err).run();
    }

    private BenchOptions options()
    {
        return BenchOptions.builder(operation).sizes(minBytes, maxBytes).stepBytes(stepBytes).stepFactor(stepFactor)
            .iterations(null == iters ? BenchOptions.DEFAULT_ITERS : iters, null == warmupIters ? 5 : warmupIters)
            .settle(null == warmupIters).timeForMinimum(null == iters).check(check).types(BenchTypes.types(dataType))
            .ops(BenchTypes.ops(reduceOp)).root(parseRoot(root)).average(average).blocking(parseBlocking())
            .registered(parseRegister())
            .algos(algos).outputs(json, csv, plot).plotStyle(PlotStyle.of(plotY, plotYScale)).minBw(minBw).build();
    }

    private boolean parseRegister()
    {
        if (register < 0 || register > 2)
        {
            throw new IllegalArgumentException("-R must be 0, 1 or 2, got " + register);
        }
        return register != 0;
    }

    private boolean parseBlocking()
    {
        if (blocking != 0 && blocking != 1)
        {
            throw new IllegalArgumentException("-z must be 0 or 1, got " + blocking);
        }
        return blocking == 1;
    }

    private static int parseRoot(final String text)
    {
        final String t = text.trim();
        if (BenchTypes.ALL.equals(t.toLowerCase(Locale.ROOT)))
        {
            return BenchOptions.ALL_ROOTS;
        }
        try
        {
            return Integer.parseInt(t);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("-r must be a rank, or -1 or all for every rank, got '" + text + "'");
        }
    }

    private static Communicator openFromEnvironment(final String algo)
    {
        return Hccl.init(CommConfig.builder().algo(algo).conclude());
    }

    /**
     * This process's rank as the launcher's variables say, before any communicator exists; 0 when they say nothing
     * readable (the communicator's creation then reports what is wrong).
     */
    private static int environmentRank()
    {
        try
        {
            return CommConfig.builder().conclude().rank();
        }
        catch (final RuntimeException ex)
        {
            return 0;
        }
    }

    /**
     * Converts an operation name; public for picocli, which instantiates it.
     */
    public static final class OpConverter implements ITypeConverter<BenchOp>
    {
        /**
         * For picocli.
         */
        public OpConverter()
        {
        }

        @Override
        public BenchOp convert(final String value)
        {
            try
            {
                return BenchOp.fromName(value);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new TypeConversionException(ex.getMessage());
            }
        }
    }
}
