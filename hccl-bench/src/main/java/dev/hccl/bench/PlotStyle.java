package dev.hccl.bench;

import java.util.Locale;

/**
 * What {@code --plot} draws on its y axis ({@code --plot-y}) and on which scale ({@code --plot-y-scale}).
 *
 * @param y    the quantity.
 * @param logY a log-10 y axis rather than a linear one.
 */
public record PlotStyle(Quantity y, boolean logY)
{
    /** Bus bandwidth on a linear axis, as before these flags. */
    public static final PlotStyle DEFAULT = new PlotStyle(Quantity.BUSBW, false);

    /**
     * Checks the quantity.
     *
     * @param y    not null.
     * @param logY whether log.
     */
    public PlotStyle
    {
        if (y == null)
        {
            throw new IllegalArgumentException("--plot-y must be busbw or time");
        }
    }

    /**
     * The style the flags name.
     *
     * @param y     {@code busbw} or {@code time}, in any case.
     * @param scale {@code linear}, {@code log}, or null for the quantity's default: log for time, whose values span
     *              orders of magnitude over a sweep, linear for busbw.
     * @return the style.
     * @throws IllegalArgumentException naming the flag and its values when either is neither.
     */
    public static PlotStyle of(final String y, final String scale)
    {
        final Quantity quantity = switch (y.toLowerCase(Locale.ROOT))
        {
            case "busbw" -> Quantity.BUSBW;
            case "time" -> Quantity.TIME;
            default -> throw new IllegalArgumentException("--plot-y must be busbw or time, got " + y);
        };
        if (scale == null)
        {
            return new PlotStyle(quantity, quantity == Quantity.TIME);
        }
        return switch (scale.toLowerCase(Locale.ROOT))
        {
            case "linear" -> new PlotStyle(quantity, false);
            case "log" -> new PlotStyle(quantity, true);
            default -> throw new IllegalArgumentException("--plot-y-scale must be linear or log, got " + scale);
        };
    }

    /**
     * A quantity of each row's out-of-place measurement.
     */
    public enum Quantity
    {
        /** Bus bandwidth, GB/s. */
        BUSBW("out-of-place busbw (GB/s)"),
        /** Time per operation, microseconds. */
        TIME("out-of-place time (us)");

        private final String axisLabel;

        Quantity(final String axisLabel)
        {
            this.axisLabel = axisLabel;
        }

        /**
         * The y axis' label.
         *
         * @param log whether the axis is log-10.
         * @return the label.
         */
        String axisLabel(final boolean log)
        {
            return log ? axisLabel + ", log10" : axisLabel;
        }

        /**
         * The value a row plots.
         *
         * @param m the row's out-of-place measurement.
         * @return busbw or time.
         */
        double of(final Measurement m)
        {
            return this == BUSBW ? m.busBw() : m.timeUs();
        }
    }
}
