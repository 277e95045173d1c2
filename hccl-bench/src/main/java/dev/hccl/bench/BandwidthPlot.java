package dev.hccl.bench;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;

import java.awt.Color;
import java.awt.Rectangle;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * {@code --plot}: out-of-place bus bandwidth or time ({@link PlotStyle}) against size, on a log-2 size axis and a
 * linear or log-10 y axis, one line per algorithm (and per type, reduction and root when the run swept several),
 * drawn with JFreeChart and written as PNG or, through JFreeSVG, SVG.
 */
public final class BandwidthPlot
{
    /** Width of the image, in pixels. */
    public static final int WIDTH = 960;
    /** Height of the image, in pixels. */
    public static final int HEIGHT = 600;

    private BandwidthPlot()
    {
    }

    /**
     * Draws the report's sweeps and writes the image; the file name's extension chooses the format.
     *
     * @param file   a {@code .png} or {@code .svg} file, replaced if it exists; missing parent directories are created.
     * @param report the report.
     * @param style  what the y axis shows, and on which scale.
     * @param names  the legend name of each sweep by its label ({@link AlgorithmLegend}); a sweep not in it is named
     *               by its label.
     * @throws IOException when the file cannot be written.
     * @throws IllegalArgumentException when the extension is neither.
     */
    public static void write(
        final Path file, final BenchReport report, final PlotStyle style, final Map<String, String> names)
        throws IOException
    {
        final String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        final JFreeChart chart = chart(report, style, names);
        ReportFiles.createParent(file);
        if (name.endsWith(".png"))
        {
            ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
        }
        else if (name.endsWith(".svg"))
        {
            final SVGGraphics2D g2 = new SVGGraphics2D(WIDTH, HEIGHT);
            chart.draw(g2, new Rectangle(0, 0, WIDTH, HEIGHT));
            Files.writeString(file, g2.getSVGElement(), StandardCharsets.UTF_8);
        }
        else
        {
            throw new IllegalArgumentException("--plot must name a .png or .svg file, got " + file);
        }
    }

    /**
     * The chart of a report.
     *
     * @param report the report.
     * @param style  the y axis.
     * @param names  legend names by sweep label.
     * @return the chart, one series per line.
     */
    public static JFreeChart chart(final BenchReport report, final PlotStyle style, final Map<String, String> names)
    {
        final XYSeriesCollection dataset = new XYSeriesCollection();
        series(report, style, names).forEach((label, points) -> dataset.addSeries(points));
        final String yLabel = style.y().axisLabel(style.logY());
        final JFreeChart chart = ChartFactory.createXYLineChart(
            "hccl-bench " + report.operation() + ": " + report.worldSize() + " ranks over " + report.transport(),
            "size (bytes, log2)", yLabel, dataset, PlotOrientation.VERTICAL, true, false, false);
        final XYPlot plot = chart.getXYPlot();
        final LogAxis sizeAxis = new LogAxis("size (bytes, log2)");
        sizeAxis.setBase(2);
        sizeAxis.setSmallestValue(1);
        // Whole powers of two only, labelled as sizes: 8 B, 1 KiB, 128 MiB.
        sizeAxis.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        sizeAxis.setNumberFormatOverride(new SizeFormat());
        plot.setDomainAxis(sizeAxis);
        // The largest size is the axis' last tick, at the plot's right edge: room for its label to be read whole.
        chart.setPadding(new RectangleInsets(4, 4, 4, 28));
        if (style.logY())
        {
            final LogAxis yAxis = new LogAxis(yLabel);
            yAxis.setBase(10);
            // Ticks at whole powers of ten, written out (0.01, 1, 1000) rather than as exponents, over whole decades:
            // left to itself the axis ticks fractional exponents (281.838293, 316.227766, ...).
            yAxis.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
            yAxis.setNumberFormatOverride(new DecimalFormat("0.######", DecimalFormatSymbols.getInstance(Locale.ROOT)));
            yAxis.setMinorTickMarksVisible(true);
            decades(dataset, yAxis);
            plot.setRangeAxis(yAxis);
        }
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        final XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        plot.setRenderer(renderer);
        return chart;
    }

    /** Sets a log axis' range to the whole decades around the dataset's positive values, if it has any. */
    private static void decades(final XYSeriesCollection dataset, final LogAxis axis)
    {
        double lowest = Double.POSITIVE_INFINITY;
        double highest = 0;
        for (int s = 0; s < dataset.getSeriesCount(); s++)
        {
            for (int i = 0; i < dataset.getItemCount(s); i++)
            {
                final double y = dataset.getYValue(s, i);
                if (y > 0)
                {
                    lowest = Math.min(lowest, y);
                    highest = Math.max(highest, y);
                }
            }
        }
        if (highest > 0)
        {
            final double from = Math.pow(10, Math.floor(Math.log10(lowest)));
            final double to = Math.pow(10, Math.ceil(Math.log10(highest)));
            axis.setRange(from, to > from ? to : from * 10);
        }
    }

    /**
     * The lines: one per algorithm, split further by type, reduction and root only where those vary, so that labels
     * stay short. Zero sizes have no place on a log axis and are left out, as are values of zero or less on a log y
     * axis.
     */
    static Map<String, XYSeries> series(
        final BenchReport report, final PlotStyle style, final Map<String, String> names)
    {
        final boolean byType = varies(report, BenchRow::type);
        final boolean byRedop = varies(report, BenchRow::redop);
        final boolean byRoot = varies(report, BenchRow::root);
        final Map<String, XYSeries> series = new LinkedHashMap<>();
        for (final Sweep sweep : report.runs())
        {
            for (final BenchRow row : sweep.rows())
            {
                final StringBuilder label = new StringBuilder(names.getOrDefault(sweep.algo(), sweep.algo()));
                if (byType)
                {
                    label.append(' ').append(row.type());
                }
                if (byRedop)
                {
                    label.append(' ').append(row.redop());
                }
                if (byRoot)
                {
                    label.append(" root ").append(row.root());
                }
                final XYSeries points = series.computeIfAbsent(label.toString(), k -> new XYSeries(k, false, true));
                final double y = style.y().of(row.outOfPlace());
                if (row.size() > 0 && (y > 0 || !style.logY()))
                {
                    points.add(row.size(), y);
                }
            }
        }
        return series;
    }

    private static boolean varies(final BenchReport report, final Function<BenchRow, Object> key)
    {
        return report.runs().stream().flatMap(s -> s.rows().stream()).map(key).distinct().count() > 1;
    }

    /**
     * Tick labels for the size axis: bytes with binary prefixes.
     */
    static final class SizeFormat extends NumberFormat
    {
        private static final long serialVersionUID = 1L;
        private static final List<String> UNITS = List.of("B", "KiB", "MiB", "GiB", "TiB");

        @Override
        public StringBuffer format(final double number, final StringBuffer to, final FieldPosition pos)
        {
            double value = number;
            int unit = 0;
            while (value >= 1024 && unit < UNITS.size() - 1)
            {
                value /= 1024;
                unit++;
            }
            final String digits = value == Math.rint(value) ?
                Long.toString((long)value) : String.format(Locale.ROOT, "%.1f", value);
            return to.append(digits).append(' ').append(UNITS.get(unit));
        }

        @Override
        public StringBuffer format(final long number, final StringBuffer to, final FieldPosition pos)
        {
            return format((double)number, to, pos);
        }

        @Override
        public Number parse(final String source, final ParsePosition pos)
        {
            throw new UnsupportedOperationException("tick labels are never parsed");
        }
    }
}
