package dev.hccl.tools.topo;

import dev.hccl.api.PairMeasurement;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The degraded-link rule: a link is degraded when its bandwidth is below {@code ratio} times the median bandwidth of
 * the links of its class. Each class is judged against itself, since a network link is expected to be slower than a
 * link within a node.
 */
public final class DegradedLinks
{
    private DegradedLinks()
    {
    }

    /**
     * Finds the degraded links, in row order.
     *
     * @param ranks     every rank, for the host names.
     * @param links     the class of every link, {@code links.get(from).get(to)}.
     * @param bandwidth the bandwidth of every link, GB/s, null on the diagonal.
     * @param ratio     the fraction of its class's median below which a link is degraded, in (0, 1].
     * @return the degraded links, empty when none is.
     */
    public static List<DegradedLink> find(
        final List<RankRecord> ranks, final List<List<LinkClass>> links, final List<List<Double>> bandwidth,
        final double ratio)
    {
        final Map<LinkClass, Double> medians = classMedians(links, bandwidth);
        final List<DegradedLink> degraded = new ArrayList<>();
        for (int from = 0; from < links.size(); from++)
        {
            for (int to = 0; to < links.size(); to++)
            {
                final LinkClass linkClass = links.get(from).get(to);
                final Double bw = bandwidth.get(from).get(to);
                if (linkClass == LinkClass.SELF || bw == null)
                {
                    continue;
                }
                final double median = medians.get(linkClass);
                if (bw < ratio * median)
                {
                    degraded.add(new DegradedLink(from, ranks.get(from).host(), to, ranks.get(to).host(), linkClass,
                        bw, median));
                }
            }
        }
        return degraded;
    }

    /**
     * The median bandwidth of each class that has at least one measured link.
     *
     * @param links     the class of every link.
     * @param bandwidth the bandwidth of every link, null on the diagonal.
     * @return the medians by class.
     */
    public static Map<LinkClass, Double> classMedians(
        final List<List<LinkClass>> links, final List<List<Double>> bandwidth)
    {
        final Map<LinkClass, List<Double>> byClass = new EnumMap<>(LinkClass.class);
        for (int from = 0; from < links.size(); from++)
        {
            for (int to = 0; to < links.size(); to++)
            {
                final LinkClass linkClass = links.get(from).get(to);
                final Double bw = bandwidth.get(from).get(to);
                if (linkClass != LinkClass.SELF && bw != null)
                {
                    byClass.computeIfAbsent(linkClass, ignored -> new ArrayList<>()).add(bw);
                }
            }
        }
        final Map<LinkClass, Double> medians = new EnumMap<>(LinkClass.class);
        byClass.forEach((linkClass, values) ->
            medians.put(linkClass, median(values.stream().mapToDouble(Double::doubleValue).toArray())));
        return medians;
    }

    /**
     * The median: the middle value, or the mean of the two middle values of an even count.
     *
     * @param values at least one value; not modified.
     * @return the median.
     */
    public static double median(final double[] values)
    {
        return PairMeasurement.median(values);
    }
}
