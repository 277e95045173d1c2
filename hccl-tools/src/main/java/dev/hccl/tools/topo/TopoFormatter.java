package dev.hccl.tools.topo;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Prints a report as {@code nvidia-smi topo -m} prints GPUs: a header with one line per rank, the matrix of link
 * classes with one row and one column per rank, its legend, and with {@code --probe} the latency and bandwidth
 * matrices and the degraded links.
 */
public final class TopoFormatter
{
    /** The prefix of each degraded link's line, for readers that grep. */
    public static final String DEGRADED = "degraded:";

    private static final String SELF = LinkClass.SELF.label();
    private static final String NO_ADDRESS = "-";
    private static final int GAP = 2;
    private static final MathContext SIGNIFICANT = new MathContext(3, RoundingMode.HALF_UP);

    private TopoFormatter()
    {
    }

    /**
     * The report's lines.
     *
     * @param report the report.
     * @return the lines, without line ends.
     */
    public static List<String> lines(final TopoReport report)
    {
        final List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "%s: %d rank%s on %d node%s", report.tool(), report.worldSize(),
            plural(report.worldSize()), report.nodeCount(), plural(report.nodeCount())));
        lines.add("");
        lines.addAll(rankHeader(report.ranks()));
        lines.add("");
        lines.addAll(nodeHeader(report.ranks()));
        lines.add("");
        lines.addAll(matrix(report.links(), LinkClass::label));
        lines.add("");
        lines.add("Legend:");
        lines.add("");
        for (final LinkClass linkClass : LinkClass.values())
        {
            lines.add(String.format(Locale.ROOT, "  %-4s = %s", linkClass.label(), linkClass.meaning()));
        }
        final Probe probe = report.probe();
        if (probe != null)
        {
            lines.add("");
            lines.add(String.format(Locale.ROOT,
                "Latency (us): half the median of %d 8-byte round trips, from row to column", probe.latencyIters()));
            lines.add("");
            lines.addAll(matrix(probe.latencyUs(), TopoFormatter::number));
            lines.add("");
            lines.add(String.format(Locale.ROOT,
                "Bandwidth (GB/s): median of %d transfers of %d bytes, from row to column", probe.bandwidthIters(),
                probe.bytes()));
            lines.add("");
            lines.addAll(matrix(probe.bandwidthGBps(), TopoFormatter::number));
            lines.add("");
            lines.addAll(degraded(report));
        }
        return lines;
    }

    /**
     * One line per rank: host, node, local rank, process id and address.
     */
    private static List<String> rankHeader(final List<RankRecord> ranks)
    {
        final List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("Rank", "Host", "Node", "Local rank", "Pid", "Address"));
        for (final RankRecord r : ranks)
        {
            rows.add(List.of(Integer.toString(r.rank()), r.host(), Integer.toString(r.node()),
                Integer.toString(r.localRank()), Long.toString(r.pid()),
                r.address().isEmpty() ? NO_ADDRESS : r.address()));
        }
        return table(rows, new boolean[]{true, false, true, true, true, false});
    }

    /**
     * One line per node: its ranks and its identity.
     */
    private static List<String> nodeHeader(final List<RankRecord> ranks)
    {
        final List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("Node", "Ranks", "Identity"));
        ranks.stream().mapToInt(RankRecord::node).distinct().sorted().forEach(node ->
        {
            final List<RankRecord> on = ranks.stream().filter(r -> r.node() == node).collect(Collectors.toList());
            rows.add(List.of(Integer.toString(node),
                on.stream().map(r -> Integer.toString(r.rank())).collect(Collectors.joining(",")),
                on.get(0).nodeId()));
        });
        return table(rows, new boolean[]{true, false, false});
    }

    /**
     * A matrix with {@code R<rank>} labels on the rows and columns, its cells right-aligned in columns of one width;
     * a null cell is the diagonal.
     */
    static <T> List<String> matrix(final List<List<T>> cells, final Function<T, String> format)
    {
        final int ranks = cells.size();
        final List<List<String>> text = new ArrayList<>(ranks);
        int width = label(ranks - 1).length();
        for (final List<T> row : cells)
        {
            final List<String> line = new ArrayList<>(ranks);
            for (final T cell : row)
            {
                final String s = cell == null ? SELF : format.apply(cell);
                width = Math.max(width, s.length());
                line.add(s);
            }
            text.add(line);
        }
        final String cellFormat = "%" + (width + GAP) + "s";
        final int labelWidth = label(ranks - 1).length();
        final StringBuilder head = new StringBuilder(" ".repeat(labelWidth));
        for (int to = 0; to < ranks; to++)
        {
            head.append(String.format(Locale.ROOT, cellFormat, label(to)));
        }
        final List<String> lines = new ArrayList<>(ranks + 1);
        lines.add(head.toString());
        for (int from = 0; from < ranks; from++)
        {
            final StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%-" + labelWidth + "s",
                label(from)));
            for (final String s : text.get(from))
            {
                line.append(String.format(Locale.ROOT, cellFormat, s));
            }
            lines.add(line.toString());
        }
        return lines;
    }

    private static List<String> degraded(final TopoReport report)
    {
        final List<String> lines = new ArrayList<>();
        final String rule = String.format(Locale.ROOT,
            "Degraded links (bandwidth below %.2f of the median of their class)", report.degradedRatio());
        if (report.degraded().isEmpty())
        {
            lines.add(rule + ": none");
            return lines;
        }
        lines.add(rule + ":");
        lines.add("");
        for (final DegradedLink d : report.degraded())
        {
            lines.add(String.format(Locale.ROOT, "  %s rank %d (%s) -> rank %d (%s): %s %s GB/s, %s median %s GB/s",
                DEGRADED, d.from(), d.fromHost(), d.to(), d.toHost(), d.linkClass().label(), number(d.bandwidthGBps()),
                d.linkClass().label(), number(d.classMedianGBps())));
        }
        return lines;
    }

    /**
     * Columns padded to their widest cell, numbers right-aligned, two spaces apart; trailing blanks cut.
     */
    private static List<String> table(final List<List<String>> rows, final boolean[] rightAligned)
    {
        final int[] widths = new int[rightAligned.length];
        for (final List<String> row : rows)
        {
            for (int c = 0; c < widths.length; c++)
            {
                widths[c] = Math.max(widths[c], row.get(c).length());
            }
        }
        final List<String> lines = new ArrayList<>(rows.size());
        for (final List<String> row : rows)
        {
            final StringBuilder line = new StringBuilder();
            for (int c = 0; c < widths.length; c++)
            {
                if (c > 0)
                {
                    line.append(" ".repeat(GAP));
                }
                line.append(String.format(Locale.ROOT, "%" + (rightAligned[c] ? "" : "-") + widths[c] + "s",
                    row.get(c)));
            }
            lines.add(line.toString().stripTrailing());
        }
        return lines;
    }

    /**
     * A measurement to three significant digits, never in exponent form: a slow link's 0.0023 GB/s must not print as
     * 0.00, nor a fast one's 12345.6 us as 1.23E+4.
     */
    static String number(final double value)
    {
        if (!Double.isFinite(value))
        {
            return Double.toString(value);
        }
        return new BigDecimal(value).round(SIGNIFICANT).stripTrailingZeros().toPlainString();
    }

    private static String label(final int rank)
    {
        return "R" + rank;
    }

    private static String plural(final int n)
    {
        return n == 1 ? "" : "s";
    }
}
