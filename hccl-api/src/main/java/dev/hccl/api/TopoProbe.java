package dev.hccl.api;

import java.util.Locale;

/**
 * Whether a communicator measures its links at creation ({@code HCCL_TOPO_PROBE}), so that the cost model chooses
 * algorithms with measured latency and bandwidth instead of the defaults.
 */
public enum TopoProbe
{
    /** Measure when the communicator spans more than one node: where the choice depends most on the network. */
    AUTO,
    /** Measure, on one node too. */
    ON,
    /** Never measure: the defaults. The default setting. */
    OFF;

    /**
     * Reads {@code auto}, {@code 1}/{@code on}/{@code true} or {@code 0}/{@code off}/{@code false}, whatever the case.
     *
     * @param value the text.
     * @return the setting.
     * @throws IllegalArgumentException for anything else, naming the values allowed.
     */
    public static TopoProbe parse(final String value)
    {
        switch (value.trim().toLowerCase(Locale.ROOT))
        {
            case "auto":
                return AUTO;
            case "1":
            case "on":
            case "true":
                return ON;
            case "0":
            case "off":
            case "false":
                return OFF;
            default:
                throw new IllegalArgumentException(
                    "HCCL_TOPO_PROBE must be auto, on (1, true) or off (0, false), got '" + value + "'");
        }
    }
}
