package dev.hccl.bench.step;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.tools.SizeConverter;
import dev.hccl.tools.ToolCommand;
import dev.hccl.tools.launch.HcclRun;
import dev.hccl.training.Compression;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * {@code hccl-step-bench}: the communication of one data-parallel training step, for a real model's gradient list.
 * Every rank of a job runs it, started by a launcher:
 * <pre>
 * bin/hcclrun -np 4 hccl-step-bench --model resnet50 --backward-ms 0,200 -w 2 -n 5
 * bin/hcclrun -np 2 hccl-step-bench --modes overlap --compression none --bucket-cap 1M,4M,16M,25M,64M --autotune
 * </pre>
 * For each simulated backward pass and each variant (a {@link StepMode}, and for {@code overlap} each compression)
 * every rank times its steps, and rank 0 prints the table of {@link StepTable}, and writes {@code --json}.
 * <p>
 * Exit status: 0; 1 when an operation fails or the JSON file cannot be written; 2 on a usage error.
 */
@Command(name = "hccl-step-bench",
    mixinStandardHelpOptions = true,
    version = "hccl-step-bench " + HcclRun.VERSION,
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {
        "Times the gradient synchronisation of one training step for a model's gradient list: one all-reduce per "
            + "tensor, fused buckets (GradientSync), buckets overlapping a simulated backward pass, and each "
            + "compression. Every rank of the job runs it; rank 0 prints the table.",
        ""},
    footer = {
        "",
        "Modes: per-tensor: a blocking FP32 average all-reduce per gradient as the backward pass makes it ready (in "
            + "reverse registration order); per-tensor-async: the same, asynchronous, joined after the backward pass; "
            + "buckets: GradientSync with overlap(false); overlap: GradientSync with overlap(true), once per "
            + "--compression.",
        "",
        "The simulated backward pass takes --backward-ms in all, shared among the gradients in proportion to their "
            + "elements, each gradient handed over after its share.",
        "",
        "All rows run in one JVM, one after the other: an early row may still include JIT warm-up beyond -w. The lines "
            + "under the table are the cost model's predictions for the same buckets, on this node and on a network.",
        "",
        "Exit status: 0 OK; 1 a failed operation or an unwritable file; 2 a usage error.",
        "",
        "Examples: bin/hcclrun -np 4 hccl-step-bench --model resnet50 --backward-ms 0,200 -w 2 -n 5",
        "  bin/hcclrun -np 2 hccl-step-bench --modes overlap --compression none --bucket-cap 1M,4M,16M,25M,64M "
            + "--autotune"})
public final class GradientStepBench implements Callable<Integer>
{
    /** Exit status of a usage error. */
    static final int USAGE = ToolCommand.USAGE;
    /** Exit status of a failure. */
    static final int FAILED = 1;


    @Spec
    private CommandSpec spec;

    @Option(names = {"-m", "--model"}, paramLabel = "NAME", defaultValue = "resnet50",
        description = "Gradient list: resnet50, bert-base or tiny (default: ${DEFAULT-VALUE}).")
    private String model;

    @Option(names = {"-n", "--iters"}, paramLabel = "N", defaultValue = "5",
        description = "Timed steps per row (default: ${DEFAULT-VALUE}).")
    private int iters;

    @Option(names = {"-w", "--warmup_iters"}, paramLabel = "N", defaultValue = "2",
        description = "Untimed steps before each row's timed ones (default: ${DEFAULT-VALUE}).")
    private int warmups;

    @Option(names = "--backward-ms", paramLabel = "MS", split = ",", defaultValue = "0",
        description = "Simulated backward pass(es) in milliseconds, comma-separated: one set of rows each "
            + "(default: ${DEFAULT-VALUE}).")
    private List<Double> backwardMs;

    @Option(names = "--compute", paramLabel = "HOW", defaultValue = "spin",
        description = "How the simulated backward pass spends its time: spin (busy, as a real one keeps a core "
            + "busy) or sleep (default: ${DEFAULT-VALUE}).")
    private String compute;

    @Option(names = "--modes", paramLabel = "MODE", split = ",",
        defaultValue = "per-tensor,per-tensor-async,buckets,overlap",
        description = "Modes, comma-separated (default: ${DEFAULT-VALUE}).")
    private List<String> modes;

    @Option(names = "--compression", paramLabel = "C", split = ",",
        defaultValue = "none,fp16,bf16,fp8e4m3,topk:0.01,powersgd:1",
        description = "Compressions for the overlap mode, comma-separated: none, fp16, bf16, fp8e4m3, fp8e5m2, "
            + "topk:F (fraction sent) or powersgd:R (approximation rank) (default: ${DEFAULT-VALUE}).")
    private List<String> compressions;

    @Option(names = "--bucket-cap", paramLabel = "SIZE", split = ",", defaultValue = "25M",
        converter = SizeConverter.class,
        description = "GradientSync's bucket cap, bytes with K, M or G; several, comma-separated, make a row each "
            + "(a sweep) (default: ${DEFAULT-VALUE}).")
    private List<Long> bucketCaps;

    @Option(names = "--autotune",
        description = "End each set with an overlap row (no compression) whose bucket sizes GradientSync's autotune "
            + "finds, from the first --bucket-cap, over steps run before the row's warm-up.")
    private boolean autotune;

    @Option(names = "--first-bucket", paramLabel = "SIZE", defaultValue = "1M",
        converter = SizeConverter.class,
        description = "GradientSync's first bucket cap (default: ${DEFAULT-VALUE}).")
    private long firstBucket;

    @Option(names = "--views",
        description = "GradientSync allocates the gradients as views of its buckets (buildViews: no copies) "
            + "instead of copying the model's own buffers in and out.")
    private boolean views;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write every step's figures to FILE as JSON.")
    private Path json;

    private final Supplier<Communicator> open;
    private final PrintStream out;
    private final PrintStream err;

    private GradientStepBench(final Supplier<Communicator> open, final PrintStream out, final PrintStream err)
    {
        this.open = open;
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
        final PrintStream printing = environmentRank() == 0 ? System.out :
            new PrintStream(OutputStream.nullOutputStream());
        System.exit(run(args, () -> Hccl.init(CommConfig.builder().conclude()), printing, System.err));
    }

    /**
     * Runs the benchmark on this rank.
     *
     * @param args the command line.
     * @param open creates this rank's communicator; the benchmark closes it.
     * @param out  receives the table, on rank 0, and {@code --help}.
     * @param err  receives usage errors and failures.
     * @return the exit status: 0, 1 on a failure, 2 on a usage error.
     */
    public static int run(
        final String[] args, final Supplier<Communicator> open, final PrintStream out, final PrintStream err)
    {
        return ToolCommand.execute("hccl-step-bench", new GradientStepBench(open, out, err), args, out, err);
    }

    /**
     * Checks the options and runs; picocli calls this after parsing.
     *
     * @return the exit status.
     */
    @Override
    public Integer call()
    {
        final StepSettings settings;
        try
        {
            settings = settings();
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ParameterException(spec.commandLine(), ex.getMessage(), ex);
        }
        try (Communicator comm = open.get())
        {
            final boolean printing = comm.rank() == 0;
            final String transport = comm.transports();
            if (printing)
            {
                StepTable.header(settings, comm.worldSize(), transport).forEach(out::println);
                out.flush();
            }
            final List<ByteBuffer> gradients = GradientBuffers.allocate(settings.model(), comm.rank());
            final StepRunner runner = new StepRunner(comm, gradients, settings);
            final List<StepResult> results = new ArrayList<>();
            for (final double ms : settings.backwardMs())
            {
                for (final StepVariant variant : settings.variants())
                {
                    final StepResult result = runner.run(variant, ms);
                    results.add(result);
                    if (printing)
                    {
                        // A row as soon as it is measured; the speedups need the per-tensor row, printed first.
                        final List<String> rows = StepTable.rows(results);
                        out.println(rows.get(rows.size() - 1));
                        out.flush();
                    }
                }
            }
            if (printing)
            {
                StepModel.lines(settings, comm.worldSize()).forEach(out::println);
            }
            if (printing && json != null)
            {
                writeJson(settings, comm.worldSize(), transport, results);
            }
            return 0;
        }
        catch (final IOException ex)
        {
            err.println("hccl-step-bench: cannot write " + json + ": " + ex);
            return FAILED;
        }
        catch (final RuntimeException ex)
        {
            err.println("hccl-step-bench: " + ex);
            return FAILED;
        }
    }

    private StepSettings settings()
    {
        final List<StepVariant> variants = new ArrayList<>();
        for (final String name : modes)
        {
            final StepMode mode = StepMode.fromName(name);
            if (mode == StepMode.OVERLAP)
            {
                for (final String c : compressions)
                {
                    final Compression compression = Compression.parse(c);
                    bucketCaps.forEach(cap -> variants.add(new StepVariant(mode, compression, cap, false)));
                }
            }
            else if (mode == StepMode.BUCKETS)
            {
                bucketCaps.forEach(cap -> variants.add(new StepVariant(mode, Compression.none(), cap, false)));
            }
            else
            {
                variants.add(new StepVariant(mode, Compression.none(), 0, false));
            }
        }
        if (autotune)
        {
            variants.add(new StepVariant(StepMode.OVERLAP, Compression.none(), bucketCaps.get(0), true));
        }
        // The per-tensor row first in each set, so that each row's speedup can be printed with it.
        variants.sort((a, b) -> Boolean.compare(b.mode() == StepMode.PER_TENSOR, a.mode() == StepMode.PER_TENSOR));
        final SimulatedBackward.Compute how = switch (compute.trim().toLowerCase(Locale.ROOT))
        {
            case "spin" -> SimulatedBackward.Compute.SPIN;
            case "sleep" -> SimulatedBackward.Compute.SLEEP;
            default -> throw new IllegalArgumentException("--compute must be spin or sleep, got '" + compute + "'");
        };
        return new StepSettings(ModelGradients.named(model), warmups, iters, backwardMs, how, variants, bucketCaps,
            autotune, firstBucket, views);
    }

    private void writeJson(
        final StepSettings settings, final int worldSize, final String transport, final List<StepResult> results)
        throws IOException
    {
        final Map<String, Object> report = new LinkedHashMap<>();
        report.put("tool", "hccl-step-bench");
        report.put("model", settings.model().name());
        report.put("tensors", settings.model().tensorCount());
        report.put("parameters", settings.model().totalElements());
        report.put("worldSize", worldSize);
        report.put("transport", transport);
        final Map<String, Object> s = new LinkedHashMap<>();
        s.put("warmups", settings.warmups());
        s.put("iterations", settings.iterations());
        s.put("compute", settings.compute().name().toLowerCase(Locale.ROOT));
        s.put("bucketCapBytes", settings.bucketCaps());
        s.put("autotune", settings.autotune());
        s.put("firstBucketBytes", settings.firstBucketBytes());
        s.put("views", settings.views());
        report.put("settings", s);
        report.put("rows", results);
        final Path parent = json.toAbsolutePath().getParent();
        if (parent != null)
        {
            Files.createDirectories(parent);
        }
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), report);
    }

    /** This process's rank as the launcher's variables say; 0 when they say nothing readable. */
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
}
