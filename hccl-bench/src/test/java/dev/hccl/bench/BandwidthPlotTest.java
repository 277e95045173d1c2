package dev.hccl.bench;

import dev.hccl.api.AlgorithmChoice;
import dev.hccl.api.Operation;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --plot}'s y axis and legend, on a report made up here so that the values, and so the ticks, are known: what
 * the SVG says, not its pixels.
 */
class BandwidthPlotTest
{
    @TempDir
    Path dir;

    @BeforeAll
    static void headless()
    {
        System.setProperty("java.awt.headless", "true");
    }

    /** Times of 1 us to 10 ms, four decades, busbw 0.5 to 8 GB/s. */
    private static BenchReport report()
    {
        final List<BenchRow> rows = List.of(
            row(8, 1, 0.5), row(1024, 10, 1), row(64 * 1024, 1000, 4), row(1 << 20, 10_000, 8));
        final BenchOptions options = BenchOptions.builder(BenchOp.ALL_REDUCE).build();
        return new BenchReport("hccl-bench", "all_reduce", 4, "inproc", BenchReport.Settings.of(options), List.of(),
            List.of(new Sweep(BenchOptions.DEFAULT_ALGO, rows, 0, 3)), 0);
    }

    private static BenchRow row(final long size, final double timeUs, final double busBw)
    {
        final Measurement m = new Measurement(timeUs, busBw, busBw, 0L, 20);
        return new BenchRow(BenchOptions.DEFAULT_ALGO, size, size / 4, "float", "sum", 0, m, m);
    }

    private static AlgorithmChoice choice(final long bytes, final String algorithm, final boolean forced)
    {
        return new AlgorithmChoice(Operation.ALL_REDUCE, bytes, algorithm, forced, Map.of(), "a model");
    }

    @Test
    void timeIsPlottedOnALogAxisByDefault()
    {
        final var chart = BandwidthPlot.chart(report(), PlotStyle.of("time", null), Map.of());
        final var axis = chart.getXYPlot().getRangeAxis();
        assertInstanceOf(LogAxis.class, axis);
        assertEquals("out-of-place time (us), log10", axis.getLabel());
        // Whole decades around the times, so that the ticks fall on powers of ten, not on fractional exponents.
        final double lower = Math.log10(axis.getLowerBound());
        final double upper = Math.log10(axis.getUpperBound());
        assertEquals(Math.rint(lower), lower, 1e-9, "lower bound " + axis.getLowerBound());
        assertEquals(Math.rint(upper), upper, 1e-9, "upper bound " + axis.getUpperBound());
        assertTrue(upper > lower);
    }

    @Test
    void busbwIsLinearUnlessLogIsAsked() throws Exception
    {
        final var linear = BandwidthPlot.chart(report(), PlotStyle.of("busbw", null), Map.of());
        assertInstanceOf(NumberAxis.class, linear.getXYPlot().getRangeAxis());
        assertEquals("out-of-place busbw (GB/s)", linear.getXYPlot().getRangeAxis().getLabel());
        assertEquals(PlotStyle.DEFAULT, PlotStyle.of("busbw", null));
        final var log = BandwidthPlot.chart(report(), PlotStyle.of("BUSBW", "log"), Map.of());
        assertInstanceOf(LogAxis.class, log.getXYPlot().getRangeAxis());
        assertFalse(PlotStyle.of("time", "linear").logY());
        assertEquals("--plot-y must be busbw or time, got algbw",
            assertThrows(IllegalArgumentException.class, () -> PlotStyle.of("algbw", null)).getMessage());
        assertEquals("--plot-y-scale must be linear or log, got ln",
            assertThrows(IllegalArgumentException.class, () -> PlotStyle.of("time", "ln")).getMessage());
    }

    @Test
    void theLegendNamesTheAlgorithmsChosenAndWhereEachGivesWay() throws Exception
    {
        final List<AlgorithmChoice> changes = List.of(choice(8, "fullmesh", false), choice(8192, "ring", false),
            choice(4L << 20, "hierarchical", false));
        final String name = AlgorithmLegend.name(BenchOptions.DEFAULT_ALGO, changes);
        assertEquals("auto (fullmesh < 8 KiB, ring < 4 MiB, hierarchical)", name);
        assertEquals("auto (ring)", AlgorithmLegend.name(BenchOptions.DEFAULT_ALGO, List.of(choice(8, "ring", false))));
        assertEquals("HCCL_ALGO (tree)",
            AlgorithmLegend.name(BenchOptions.DEFAULT_ALGO, List.of(choice(8, "tree", true))));
        assertEquals("ring", AlgorithmLegend.name("ring", List.of(choice(8, "ring", true))), "--algo names its line");
        assertEquals("default", AlgorithmLegend.name(BenchOptions.DEFAULT_ALGO, List.of()), "sendrecv, barrier");

        final Path svg = dir.resolve("legend.svg");
        BandwidthPlot.write(svg, report(), PlotStyle.DEFAULT, Map.of(BenchOptions.DEFAULT_ALGO, name));
        final String image = Files.readString(svg, StandardCharsets.UTF_8);
        assertTrue(image.contains(">auto (fullmesh &lt; 8 KiB, ring &lt; 4 MiB, hierarchical)<"),
            "no legend entry naming the algorithms");
    }
}
