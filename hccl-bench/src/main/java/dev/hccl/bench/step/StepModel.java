package dev.hccl.bench.step;

import dev.hccl.algorithms.CostParameters;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.algorithms.WireProtocol;
import dev.hccl.api.RankLayout;
import dev.hccl.training.BucketPlan;
import dev.hccl.training.Compression;
import dev.hccl.training.StepPrices;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What the cost model predicts for the communication of the benchmark's variants ({@link StepPrices}, a
 * compressed wire priced by its {@link WireProtocol}; PowerSGD per bucket by {@link StepPrices#lowRankStepSeconds}),
 * on two layouts: the ranks on one node like this one (the VM's shared-memory figures), and one rank per node on
 * 10 GbE, where the bytes saved by compression weigh more. Printed under the table so that a measurement can be read
 * against the prediction, and a user can see where compression starts to pay.
 */
final class StepModel
{
    private static final double MS = 1e3;

    private StepModel()
    {
    }

    /**
     * @param settings  the run's settings.
     * @param worldSize the ranks.
     * @return {@code #} lines, one per layout.
     */
    static List<String> lines(final StepSettings settings, final int worldSize)
    {
        final long[] tensorBytes = settings.model().elementCounts().clone();
        for (int t = 0; t < tensorBytes.length; t++)
        {
            tensorBytes[t] *= Float.BYTES;
        }
        final BucketPlan plan = BucketPlan.of(tensorBytes, settings.firstBucketBytes(), settings.bucketCapBytes());
        final long[] bucketBytes = new long[plan.bucketCount()];
        for (int b = 0; b < bucketBytes.length; b++)
        {
            bucketBytes[b] = plan.bytes(b);
        }
        final Set<Compression> compressions = new LinkedHashSet<>();
        settings.variants().forEach(v -> compressions.add(v.compression()));
        final List<String> lines = new ArrayList<>();
        lines.add("# cost model, communication alone (StepPrices; per-tensor: one all-reduce a tensor, " +
            "the others: this run's " + bucketBytes.length + " buckets):");
        lines.add(line("one node, this VM's shared memory", RankLayout.singleNode(worldSize),
            new LinkCosts(CostParameters.VM_SHARED_MEMORY, LinkCosts.ETHERNET_10G, "VM"), tensorBytes, bucketBytes,
            compressions));
        lines.add(line(worldSize + " nodes of one rank, 10 GbE", RankLayout.blocks(worldSize, 1), LinkCosts.DEFAULTS,
            tensorBytes, bucketBytes, compressions));
        return lines;
    }

    private static String line(
        final String where, final RankLayout layout, final LinkCosts links, final long[] tensorBytes,
        final long[] bucketBytes, final Set<Compression> compressions)
    {
        final StringBuilder sb = new StringBuilder("#   ").append(where).append(": per-tensor ")
            .append(ms(seconds(layout, links, tensorBytes, Compression.none())));
        for (final Compression c : compressions)
        {
            sb.append(", ").append(c).append(' ').append(ms(seconds(layout, links, bucketBytes, c)));
        }
        return sb.toString();
    }

    private static double seconds(
        final RankLayout layout, final LinkCosts links, final long[] pieces, final Compression compression)
    {
        double seconds = 0;
        for (final long bytes : pieces)
        {
            seconds += StepPrices.standard().seconds(layout, links, bytes, compression);
        }
        return seconds;
    }

    private static String ms(final double seconds)
    {
        return String.format(Locale.ROOT, "%.1f ms", seconds * MS);
    }
}
