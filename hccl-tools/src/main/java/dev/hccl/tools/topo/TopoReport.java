package dev.hccl.tools.topo;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Everything one {@code hccl-topo} run found, as printed and as written to {@code --json}.
 *
 * @param tool          always {@code hccl-topo}.
 * @param worldSize     the number of ranks.
 * @param nodeCount     the number of nodes.
 * @param ranks         every rank's record, by rank.
 * @param links         the class of every link, {@code links.get(from).get(to)}.
 * @param probe         what {@code --probe} measured, or null without it.
 * @param degradedRatio the fraction of its class's median below which a link is degraded.
 * @param degraded      the degraded links, or null without {@code --probe}.
 */
public record TopoReport(
    String tool, int worldSize, int nodeCount, List<RankRecord> ranks, List<List<LinkClass>> links, Probe probe,
    double degradedRatio, List<DegradedLink> degraded)
{
    /** The tool's name. */
    public static final String TOOL = "hccl-topo";

    /**
     * Copies the lists.
     *
     * @param tool          the tool.
     * @param worldSize     the number of ranks.
     * @param nodeCount     the number of nodes.
     * @param ranks         the ranks.
     * @param links         the link classes.
     * @param probe         the measurements, or null.
     * @param degradedRatio the degraded-link ratio.
     * @param degraded      the degraded links, or null.
     */
    public TopoReport
    {
        ranks = List.copyOf(ranks);
        final List<List<LinkClass>> rows = new ArrayList<>(links.size());
        links.forEach(row -> rows.add(List.copyOf(row)));
        links = Collections.unmodifiableList(rows);
        degraded = degraded == null ? null : List.copyOf(degraded);
    }

    /**
     * The report of a run: the link classes from the ranks' nodes, and the degraded links when probed.
     *
     * @param ranks         every rank's record, by rank.
     * @param probe         the measurements, or null.
     * @param degradedRatio the degraded-link ratio.
     * @return the report.
     */
    public static TopoReport of(final List<RankRecord> ranks, final Probe probe, final double degradedRatio)
    {
        return of(ranks, null, probe, degradedRatio);
    }

    /**
     * The report of a run: the link classes from the ranks' nodes and transports, and the degraded links when
     * probed.
     *
     * @param ranks         every rank's record, by rank.
     * @param sharedMemory  {@code sharedMemory[a][b]}: whether rank a reaches rank b through shared memory; null when
     *                      not known.
     * @param probe         the measurements, or null.
     * @param degradedRatio the degraded-link ratio.
     * @return the report.
     */
    public static TopoReport of(
        final List<RankRecord> ranks, final boolean[][] sharedMemory, final Probe probe, final double degradedRatio)
    {
        final List<List<LinkClass>> links = new ArrayList<>(ranks.size());
        for (final RankRecord a : ranks)
        {
            final List<LinkClass> row = new ArrayList<>(ranks.size());
            for (final RankRecord b : ranks)
            {
                row.add(LinkClass.of(a.rank(), a.node(), b.rank(), b.node(),
                    sharedMemory != null && sharedMemory[a.rank()][b.rank()]));
            }
            links.add(row);
        }
        final int nodes = (int)ranks.stream().mapToInt(RankRecord::node).distinct().count();
        final List<DegradedLink> degraded = probe == null ? null :
            DegradedLinks.find(ranks, links, probe.bandwidthGBps(), degradedRatio);
        return new TopoReport(TOOL, ranks.size(), nodes, ranks, links, probe, degradedRatio, degraded);
    }
}
