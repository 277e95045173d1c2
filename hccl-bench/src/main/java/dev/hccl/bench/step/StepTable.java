package dev.hccl.bench.step;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The table rank 0 prints: a header of {@code #} lines, then one row per variant and backward pass, all figures
 * measured. Times are in milliseconds; each is, per step, the slowest rank's, summarised over the timed steps as the
 * median, the minimum and the maximum. The speedup is the per-tensor row's median step over this row's, within one
 * backward pass.
 */
final class StepTable
{
    /** The column names, in order. */
    static final List<String> COLUMNS = List.of("backward", "mode", "compression", "cap_MiB", "colls", "wire_MiB",
        "step",
        "min", "max", "exposed", "min", "max", "speedup", "fallbacks");

    private static final String ROW = "%9s  %-16s  %-11s %10s %5s %9s %9s %9s %9s %9s %9s %9s %8s %9s";
    private static final double MS = 1e6;
    private static final double MIB = 1 << 20;

    private StepTable()
    {
    }

    /**
     * @param settings  the settings.
     * @param worldSize the ranks.
     * @param transport the communicator's transports.
     * @return the header lines, each starting with {@code #}.
     */
    static List<String> header(final StepSettings settings, final int worldSize, final String transport)
    {
        final ModelGradients model = settings.model();
        final List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "# hccl-step-bench: model %s, %d gradients, %d parameters (%.2f MiB " +
            "FP32)", model.name(), model.tensorCount(), model.totalElements(), model.totalElements() * 4.0 / MIB));
        lines.add(String.format(Locale.ROOT, "# nRanks %d transport %s warmup iters: %d iters: %d compute: %s " +
            "first bucket: %d B gradients: %s", worldSize, transport, settings.warmups(),
            settings.iterations(), settings.compute().name().toLowerCase(Locale.ROOT), settings.firstBucketBytes(),
            settings.views() ? "bucket views" : "copied into buckets"));
        lines.add("# Times in ms; per step the slowest rank's; median, min and max over the iterations. backward: "
            + "the simulated computation (median);");
        lines.add("# exposed: step - backward; speedup: per-tensor's median step / this row's, same backward pass; "
            + "fallbacks: buckets re-sent in FP32;");
        lines.add("# cap_MiB: the bucket cap; auto:F/C the first bucket and cap that autotune chose, in steps before "
            + "the row's.");
        lines.add("#");
        lines.add("#" + String.format(Locale.ROOT, ROW, COLUMNS.toArray()).substring(1));
        return lines;
    }

    /**
     * @param results the rows, grouped by backward pass.
     * @return one line per result.
     */
    static List<String> rows(final List<StepResult> results)
    {
        final List<String> lines = new ArrayList<>();
        for (final StepResult r : results)
        {
            final String speedup = results.stream()
                .filter(p -> p.backwardMs() == r.backwardMs() && StepMode.PER_TENSOR.cliName().equals(p.mode()))
                .findFirst().map(p -> String.format(Locale.ROOT, "%.2f", StepResult.median(p.stepNanos()) /
                    StepResult.median(r.stepNanos()))).orElse("-");
            lines.add(String.format(Locale.ROOT, ROW, ms(StepResult.median(r.computeNanos())), r.mode(),
                r.compression(), cap(r), r.collectives(), String.format(Locale.ROOT, "%.2f", r.wireBytes() / MIB),
                ms(StepResult.median(r.stepNanos())), ms(StepResult.min(r.stepNanos())),
                ms(StepResult.max(r.stepNanos())), ms(StepResult.median(r.exposedNanos())),
                ms(StepResult.min(r.exposedNanos())), ms(StepResult.max(r.exposedNanos())), speedup,
                r.fallbacks()));
        }
        return lines;
    }

    private static String cap(final StepResult r)
    {
        if (r.bucketCapBytes() == 0)
        {
            return "-";
        }
        final String cap = mib(r.bucketCapBytes());
        return r.tuningSteps() < 0 ? cap : "auto:" + mib(r.firstBucketBytes()) + "/" + cap;
    }

    /** A size in MiB as the table shows it: whole, or two significant digits. */
    static String mib(final long bytes)
    {
        final double mib = bytes / MIB;
        return mib == Math.rint(mib) ? Long.toString((long)mib) : String.format(Locale.ROOT, "%.2g", mib);
    }

    private static String ms(final double nanos)
    {
        return String.format(Locale.ROOT, "%.2f", nanos / MS);
    }
}
