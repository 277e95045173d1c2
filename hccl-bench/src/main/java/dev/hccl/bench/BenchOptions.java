package dev.hccl.bench;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * What to measure, checked once: the parsed command line of {@code hccl-bench}.
 *
 * @param op          the operation.
 * @param minBytes    first size ({@code -b}).
 * @param maxBytes    last size at most ({@code -e}).
 * @param stepBytes   increment between sizes when {@code stepFactor} is 1 ({@code -i}).
 * @param stepFactor  multiplier between sizes; 1 means add {@code stepBytes} instead ({@code -f}).
 * @param iters       timed iterations per measurement ({@code -n}).
 * @param warmupIters untimed iterations at the largest and the smallest size before each sweep, and before each
 *                    timed run ({@code -w}).
 * @param settle      without {@code -w}: before each timed run, untimed operations until their time settles
 *                    ({@link Settling}), as JMH warms up, rather than {@code warmupIters} of them.
 * @param timeForMinimum without {@code -n}: each measurement times at least {@code iters} operations and as many as
 *                    fill {@link TimedOperations#MIN_SECONDS}, rather than exactly {@code iters}.
 * @param check       checking runs per measurement, 0 for none ({@code -c}).
 * @param types       the element types ({@code -d}).
 * @param ops         the reductions ({@code -o}); ignored by operations without one.
 * @param root        the root ({@code -r}), or -1 for every rank in turn; ignored by operations without one.
 * @param average     how times combine across ranks ({@code -a}): 0 rank 0's, 1 mean, 2 min, 3 max.
 * @param blocking    {@code -z 1}: each operation is a blocking call, run on the calling thread, rather than all
 *                    {@code -n} issued asynchronously and then awaited.
 * @param registered  {@code -R 1}: the send and receive buffers are registered
 *                    ({@link dev.hccl.api.Communicator#allocateRegistered}), so that the node arena reads them in place.
 * @param algos       {@code --algo} values, one sweep each; empty for one sweep with the default configuration.
 * @param json        {@code --json} file, or null.
 * @param csv         {@code --csv} file, or null.
 * @param plot        {@code --plot} file ({@code .png} or {@code .svg}), or null.
 * @param plotStyle   {@code --plot-y} and {@code --plot-y-scale}.
 * @param minBw       {@code --min-bw} in GB/s, or null.
 */
public record BenchOptions(
    BenchOp op,
    long minBytes,
    long maxBytes,
    long stepBytes,
    long stepFactor,
    int iters,
    int warmupIters,
    boolean settle,
    boolean timeForMinimum,
    int check,
    List<DataType> types,
    List<ReduceOp> ops,
    int root,
    int average,
    boolean blocking,
    boolean registered,
    List<String> algos,
    Path json,
    Path csv,
    Path plot,
    PlotStyle plotStyle,
    Double minBw)
{
    /** Value of {@link #root()} that means every rank in turn, as nccl-tests' {@code -r -1}. */
    public static final int ALL_ROOTS = -1;

    /** The largest size: a Java buffer holds at most this many bytes. */
    public static final long MAX_BYTES = Integer.MAX_VALUE;

    /** {@code -n}'s default, nccl-tests' too. */
    public static final int DEFAULT_ITERS = 20;

    /** Label of the sweep that runs without {@code --algo}. */
    public static final String DEFAULT_ALGO = "default";

    /**
     * Validates everything that does not depend on the world size.
     *
     * @param op          the operation.
     * @param minBytes    first size.
     * @param maxBytes    last size at most.
     * @param stepBytes   additive step.
     * @param stepFactor  multiplicative step, or 1.
     * @param iters       timed iterations.
     * @param warmupIters warm-up iterations.
     * @param settle      warm up until settled instead.
     * @param timeForMinimum time at least {@code iters} operations and {@link TimedOperations#MIN_SECONDS}.
     * @param check       checking runs.
     * @param types       element types.
     * @param ops         reductions.
     * @param root        root or {@link #ALL_ROOTS}.
     * @param average     time aggregation.
     * @param blocking    blocking calls.
     * @param registered  registered buffers.
     * @param algos       algorithms.
     * @param json        JSON file or null.
     * @param csv         CSV file or null.
     * @param plot        plot file or null.
     * @param plotStyle   the plot's y axis, not null.
     * @param minBw       bandwidth floor or null.
     * @throws IllegalArgumentException naming the flag at fault.
     */
    public BenchOptions
    {
        require(op != null, "an operation is required");
        require(minBytes >= 0, "-b must not be negative, got " + minBytes);
        require(maxBytes <= MAX_BYTES, "-e must be at most " + MAX_BYTES + " bytes (a Java buffer's limit), got " +
            maxBytes);
        require(minBytes <= maxBytes, "invalid sizes for 'minbytes' and 'maxbytes': " + minBytes + " > " + maxBytes);
        require(stepFactor >= 1, "-f must be at least 1, got " + stepFactor);
        require(stepFactor > 1 || stepBytes >= 1, "-i must be at least 1 byte, got " + stepBytes);
        require(stepFactor == 1 || minBytes > 0, "-b 0 with -f " + stepFactor + " would never grow: start at 1 or more");
        require(iters >= 1, "-n must be at least 1, got " + iters);
        require(warmupIters >= 0, "-w must not be negative, got " + warmupIters);
        require(check >= 0, "-c must not be negative, got " + check);
        require(average >= 0 && average <= 3, "-a must be 0 (rank 0), 1 (average), 2 (min) or 3 (max), got " + average);
        require(root >= ALL_ROOTS, "-r must be a rank, or -1 or all for every rank, got " + root);
        require(minBw == null || (minBw >= 0 && Double.isFinite(minBw)),
            "--min-bw must be a non-negative number of GB/s, got " + minBw);
        types = List.copyOf(types);
        ops = List.copyOf(ops);
        algos = List.copyOf(algos);
        require(!types.isEmpty() && !ops.isEmpty(), "-d and -o must name something");
        for (final String algo : algos)
        {
            require(!algo.isBlank(), "--algo must not name an empty algorithm");
        }
        require(plotStyle != null, "--plot-y and --plot-y-scale must name a plot style");
        if (plot != null)
        {
            final String name = plot.getFileName().toString().toLowerCase(Locale.ROOT);
            require(name.endsWith(".png") || name.endsWith(".svg"),
                "--plot must name a .png or .svg file, got " + plot);
        }
        if (op.hasReduction())
        {
            require(types.stream().anyMatch(DataType::isFloatingPoint) || ops.stream().anyMatch(o -> o != ReduceOp.AVG),
                "-o avg applies to floating-point types only (half, float, double, bfloat16)");
        }
    }

    /**
     * The sizes of the sweep, as nccl-tests steps them: from {@code -b}, times {@code -f} (or plus {@code -i}), while
     * at most {@code -e}. Barrier has one size, 0.
     *
     * @return the sizes in bytes, ascending.
     */
    public List<Long> sizes()
    {
        final List<Long> sizes = new ArrayList<>();
        if (op == BenchOp.BARRIER)
        {
            sizes.add(0L);
            return sizes;
        }
        for (long size = minBytes; size <= maxBytes; )
        {
            sizes.add(size);
            final long next = stepFactor > 1 ? size * stepFactor : size + stepBytes;
            if (next <= size || (stepFactor > 1 && next / stepFactor != size))
            {
                break; // overflow: the next size would be beyond any buffer anyway
            }
            size = next;
        }
        return sizes;
    }

    /**
     * The sweeps to run, in nccl-tests' nesting: types, then reductions, then roots. AVG is skipped for integer
     * types, which the library does not average.
     *
     * @param ranks the world size (for {@code -r all}).
     * @return the cases.
     */
    public List<BenchCase> cases(final int ranks)
    {
        final List<BenchCase> cases = new ArrayList<>();
        if (op == BenchOp.BARRIER)
        {
            cases.add(new BenchCase(null, null, -1));
            return cases;
        }
        for (final DataType type : types)
        {
            for (final ReduceOp reduceOp : op.hasReduction() ? ops : Collections.<ReduceOp>singletonList(null))
            {
                if (reduceOp == ReduceOp.AVG && !type.isFloatingPoint())
                {
                    continue;
                }
                if (!op.hasRoot())
                {
                    cases.add(new BenchCase(type, reduceOp, -1));
                }
                else if (root == ALL_ROOTS)
                {
                    for (int r = 0; r < ranks; r++)
                    {
                        cases.add(new BenchCase(type, reduceOp, r));
                    }
                }
                else
                {
                    cases.add(new BenchCase(type, reduceOp, root));
                }
            }
        }
        return cases;
    }

    /**
     * What makes these options impossible with a given world size, found once the communicator exists.
     *
     * @param ranks the world size.
     * @return null when they fit, else the reason.
     */
    public String problemWith(final int ranks)
    {
        if (op.hasRoot() && root >= ranks)
        {
            return "-r " + root + " is not a rank of " + ranks;
        }
        if (op == BenchOp.SENDRECV && ranks < 2)
        {
            return "sendrecv needs at least 2 ranks: a rank cannot send to itself";
        }
        return null;
    }

    /**
     * The labels of the sweeps to run.
     *
     * @return the {@code --algo} values, or {@link #DEFAULT_ALGO}.
     */
    public List<String> algoLabels()
    {
        return algos.isEmpty() ? List.of(DEFAULT_ALGO) : algos;
    }

    private static void require(final boolean condition, final String message)
    {
        if (!condition)
        {
            throw new IllegalArgumentException(message);
        }
    }

    /**
     * Options built by name, starting from the command line's defaults (nccl-tests' own: 32 MiB once, 20 timed and
     * 5 warm-up iterations, one check, FP32 sum, root 0, average time, asynchronous issue).
     *
     * @param op the operation.
     * @return a builder.
     */
    public static Builder builder(final BenchOp op)
    {
        return new Builder(op);
    }

    /** Builds {@link BenchOptions} by name; {@link #build()} validates. */
    public static final class Builder
    {
        private final BenchOp op;
        private long minBytes = 32L << 20;
        private long maxBytes = 32L << 20;
        private long stepBytes = 1L << 20;
        private long stepFactor = 1;
        private int iters = DEFAULT_ITERS;
        private int warmupIters = 5;
        private boolean settle;
        private boolean timeForMinimum;
        private int check = 1;
        private List<DataType> types = List.of(DataType.FP32);
        private List<ReduceOp> ops = List.of(ReduceOp.SUM);
        private int root;
        private int average = 1;
        private boolean blocking;
        private boolean registered;
        private List<String> algos = List.of();
        private Path json;
        private Path csv;
        private Path plot;
        private PlotStyle plotStyle = PlotStyle.DEFAULT;
        private Double minBw;

        private Builder(final BenchOp op)
        {
            this.op = op;
        }

        /**
         * @param min first size
         * @param max last size at most
         * @return this.
         */
        public Builder sizes(final long min, final long max)
        {
            this.minBytes = min;
            this.maxBytes = max;
            return this;
        }

        /**
         * @param bytes additive step, used when the factor is 1
         * @return this.
         */
        public Builder stepBytes(final long bytes)
        {
            this.stepBytes = bytes;
            return this;
        }

        /**
         * @param factor multiplicative step, or 1
         * @return this.
         */
        public Builder stepFactor(final long factor)
        {
            this.stepFactor = factor;
            return this;
        }

        /**
         * @param timed timed iterations
         * @param warmup warm-up iterations
         * @return this.
         */
        public Builder iterations(final int timed, final int warmup)
        {
            this.iters = timed;
            this.warmupIters = warmup;
            return this;
        }

        /**
         * Warms each size until its time settles ({@link Settling}) instead of a fixed count: what {@code hccl-bench}
         * does when {@code -w} is not given.
         *
         * @param untilSettled whether to.
         * @return this.
         */
        public Builder settle(final boolean untilSettled)
        {
            this.settle = untilSettled;
            return this;
        }

        /**
         * Times at least the iterations given and as many as fill {@link TimedOperations#MIN_SECONDS} at each size's
         * warmed rate: what {@code hccl-bench} does when {@code -n} is not given.
         *
         * @param forMinimum whether to.
         * @return this.
         */
        public Builder timeForMinimum(final boolean forMinimum)
        {
            this.timeForMinimum = forMinimum;
            return this;
        }

        /**
         * @param runs checked runs per size, 0 for none
         * @return this.
         */
        public Builder check(final int runs)
        {
            this.check = runs;
            return this;
        }

        /**
         * @param list element types
         * @return this.
         */
        public Builder types(final List<DataType> list)
        {
            this.types = list;
            return this;
        }

        /**
         * @param list reductions
         * @return this.
         */
        public Builder ops(final List<ReduceOp> list)
        {
            this.ops = list;
            return this;
        }

        /**
         * @param rank root, or {@link #ALL_ROOTS}
         * @return this.
         */
        public Builder root(final int rank)
        {
            this.root = rank;
            return this;
        }

        /**
         * @param mode time across ranks: 0 rank 0's, 1 average, 2 minimum, 3 maximum
         * @return this.
         */
        public Builder average(final int mode)
        {
            this.average = mode;
            return this;
        }

        /**
         * @param block whether each call blocks
         * @return this.
         */
        public Builder blocking(final boolean block)
        {
            this.blocking = block;
            return this;
        }

        /**
         * @param register whether the buffers are registered
         * @return this.
         */
        public Builder registered(final boolean register)
        {
            this.registered = register;
            return this;
        }

        /**
         * @param names algorithms to force, one sweep each
         * @return this.
         */
        public Builder algos(final List<String> names)
        {
            this.algos = names;
            return this;
        }

        /**
         * @param jsonFile JSON output or null
         * @param csvFile CSV output or null
         * @param plotFile plot or null
         * @return this.
         */
        public Builder outputs(final Path jsonFile, final Path csvFile, final Path plotFile)
        {
            this.json = jsonFile;
            this.csv = csvFile;
            this.plot = plotFile;
            return this;
        }

        /**
         * @param style the plot's y axis
         * @return this.
         */
        public Builder plotStyle(final PlotStyle style)
        {
            this.plotStyle = style;
            return this;
        }

        /**
         * @param gbPerSecond bus bandwidth floor, or null
         * @return this.
         */
        public Builder minBw(final Double gbPerSecond)
        {
            this.minBw = gbPerSecond;
            return this;
        }

        /**
         * @return the options.
         * @throws IllegalArgumentException naming the flag at fault.
         */
        public BenchOptions build()
        {
            return new BenchOptions(op, minBytes, maxBytes, stepBytes, stepFactor, iters, warmupIters, settle,
                timeForMinimum, check, types, ops, root, average, blocking, registered, algos, json, csv, plot,
                plotStyle, minBw);
        }
    }
}
