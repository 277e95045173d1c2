package dev.hccl.bench;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The text of nccl-tests' output, format string for format string ({@code common.cu}), so that tools which read
 * nccl-tests' tables read ours.
 */
public final class Table
{
    private static final Locale ROOT = Locale.ROOT;

    private Table()
    {
    }

    /**
     * The three header lines of the table (nccl-tests' {@code print_header}).
     *
     * @return the lines, without line ends.
     */
    public static List<String> header()
    {
        return List.of(
            String.format(ROOT, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place" +
                "          ", "", "", "", "", ""),
            String.format(ROOT, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s",
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                "time", "algbw", "busbw", "#wrong"),
            String.format(ROOT, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s",
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""));
    }

    /**
     * One row: {@code size count type redop root}, then the out-of-place and the in-place measurement.
     *
     * @param row the row.
     * @return the line, without line end.
     */
    public static String row(final BenchRow row)
    {
        return String.format(ROOT, "%12d  %12d  %8s  %6s  %6d", row.size(), row.count(), row.type(), row.redop(),
            row.root()) + measurement(row.outOfPlace()) + measurement(row.inPlace());
    }

    /**
     * One column group: {@code time algbw busbw #wrong} (nccl-tests' {@code BenchTime}); {@code N/A} for #wrong when
     * results were not checked.
     *
     * @param m the measurement.
     * @return the text, starting with its two separating spaces.
     */
    public static String measurement(final Measurement m)
    {
        return String.format(ROOT, "  %7s  %6.2f  %6.2f  %5s", time(m.timeUs()), m.algBw(), m.busBw(),
            m.wrong() == null ? "N/A" : Long.toString(m.wrong()));
    }

    /**
     * A time in microseconds, with fewer decimals as it grows, as nccl-tests prints it.
     *
     * @param us microseconds.
     * @return seven characters at least.
     */
    public static String time(final double us)
    {
        if (us >= 10000.0)
        {
            return String.format(ROOT, "%7.0f", us);
        }
        if (us >= 100.0)
        {
            return String.format(ROOT, "%7.1f", us);
        }
        return String.format(ROOT, "%7.2f", us);
    }

    /**
     * The footer of a sweep: out-of-bounds values and the average bus bandwidth, then a bare {@code #}.
     *
     * @param outOfBounds failed checks over the sweep, as {@link Sweep#outOfBounds()}.
     * @param avgBusBw    mean busbw of the sweep.
     * @param minBw       the {@code --min-bw} floor, or null (then no verdict follows the bandwidth).
     * @return the lines, without line ends.
     */
    public static List<String> footer(final long outOfBounds, final double avgBusBw, final Double minBw)
    {
        final List<String> lines = new ArrayList<>(3);
        lines.add("# Out of bounds values : " + outOfBounds + (outOfBounds != 0 ? " FAILED" : " OK"));
        lines.add("# Avg bus bandwidth    : " + g(avgBusBw) +
            (minBw == null ? "" : avgBusBw < minBw ? " FAILED" : " OK"));
        lines.add("#");
        return lines;
    }

    /**
     * A number as C's {@code printf("%g")} prints it: six significant digits, trailing zeros dropped, exponent form
     * below 1e-4 and from 1e6.
     *
     * @param value the number.
     * @return e.g. {@code 3.51013}, {@code 0}, {@code 1.5e+06}.
     */
    public static String g(final double value)
    {
        if (Double.isNaN(value))
        {
            return "nan";
        }
        if (Double.isInfinite(value))
        {
            return value > 0 ? "inf" : "-inf";
        }
        if (value == 0)
        {
            return (1 / value) < 0 ? "-0" : "0";
        }
        // The exact binary value rounded half-even to six digits, as glibc does.
        final BigDecimal rounded = new BigDecimal(value).round(new MathContext(6, RoundingMode.HALF_EVEN));
        final int exponent = rounded.precision() - rounded.scale() - 1;
        if (exponent >= -4 && exponent < 6)
        {
            return stripZeros(rounded.setScale(Math.max(0, 5 - exponent), RoundingMode.UNNECESSARY).toPlainString());
        }
        final String mantissa = stripZeros(rounded.movePointLeft(exponent)
            .setScale(5, RoundingMode.UNNECESSARY).toPlainString());
        return mantissa + (exponent < 0 ? "e-" : "e+") + String.format(ROOT, "%02d", Math.abs(exponent));
    }

    private static String stripZeros(final String plain)
    {
        if (plain.indexOf('.') < 0)
        {
            return plain;
        }
        int end = plain.length();
        while (plain.charAt(end - 1) == '0')
        {
            end--;
        }
        if (plain.charAt(end - 1) == '.')
        {
            end--;
        }
        return plain.substring(0, end);
    }
}
