package dev.hccl.bench;

import java.util.List;

/**
 * Everything one {@code hccl-bench} run measured, as written to {@code --json}.
 *
 * @param tool      always {@code hccl-bench}.
 * @param operation the operation's command-line name.
 * @param worldSize the number of ranks.
 * @param transport the communicator's transport, e.g. {@code tcp/epoll} or {@code inproc}.
 * @param settings  the options that shape the numbers.
 * @param ranks     every rank's identity.
 * @param runs      one sweep per algorithm.
 * @param status    the exit status the run ends with (files aside).
 */
public record BenchReport(
    String tool, String operation, int worldSize, String transport, Settings settings, List<RankInfo> ranks,
    List<Sweep> runs, int status)
{
    /**
     * Copies the lists.
     *
     * @param tool      the tool.
     * @param operation the operation.
     * @param worldSize the number of ranks.
     * @param transport the transport.
     * @param settings  the settings.
     * @param ranks     the ranks.
     * @param runs      the sweeps.
     * @param status    the exit status.
     */
    public BenchReport
    {
        ranks = List.copyOf(ranks);
        runs = List.copyOf(runs);
    }

    /**
     * The options of a run that a reader needs to interpret its numbers.
     *
     * @param minBytes    {@code -b}.
     * @param maxBytes    {@code -e}.
     * @param stepBytes   {@code -i}.
     * @param stepFactor  {@code -f}.
     * @param iters       {@code -n}.
     * @param warmupIters {@code -w}.
     * @param settled     whether each size was warmed until its time settled ({@code -w} not given).
     * @param timedForMinimum whether each measurement timed at least {@code iters} operations and as many as fill
     *                    {@link TimedOperations#MIN_SECONDS} ({@code -n} not given); each measurement says how many.
     * @param check       {@code -c}.
     * @param average     {@code -a}.
     * @param types       {@code -d}, as nccl-tests names.
     * @param ops         {@code -o}, as nccl-tests names.
     * @param root        {@code -r}, -1 for every rank.
     * @param algos       {@code --algo}, or {@code default}.
     * @param minBw       {@code --min-bw}, or null.
     */
    public record Settings(
        long minBytes, long maxBytes, long stepBytes, long stepFactor, int iters, int warmupIters, boolean settled,
        boolean timedForMinimum, int check,
        int average, List<String> types, List<String> ops, int root, List<String> algos, Double minBw)
    {
        /**
         * The settings of parsed options.
         *
         * @param o the options.
         * @return the settings.
         */
        public static Settings of(final BenchOptions o)
        {
            return new Settings(o.minBytes(), o.maxBytes(), o.stepBytes(), o.stepFactor(), o.iters(), o.warmupIters(),
                o.settle(), o.timeForMinimum(), o.check(), o.average(),
                o.types().stream().map(BenchTypes::name).toList(), o.ops().stream().map(BenchTypes::name).toList(),
                o.root(), o.algoLabels(), o.minBw());
        }
    }
}
