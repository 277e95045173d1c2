package dev.hccl.tools.topo;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What {@code --probe} measured, one value per ordered pair of ranks: row {@code from}, column {@code to}; null on the
 * diagonal.
 *
 * @param bytes          bytes per bandwidth transfer.
 * @param latencyIters   8-byte round trips per pair.
 * @param bandwidthIters transfers per pair.
 * @param latencyUs      one-way latency in microseconds: half the median round trip started by {@code from}.
 * @param bandwidthGBps  bandwidth from {@code from} to {@code to} in GB/s (10^9 bytes per second): the bytes over the
 *                       median time of a transfer and its 8-byte acknowledgement.
 */
public record Probe(
    long bytes, int latencyIters, int bandwidthIters, List<List<Double>> latencyUs, List<List<Double>> bandwidthGBps)
{
    /**
     * Copies the matrices.
     *
     * @param bytes          bytes per bandwidth transfer.
     * @param latencyIters   round trips per pair.
     * @param bandwidthIters transfers per pair.
     * @param latencyUs      latencies, row by row.
     * @param bandwidthGBps  bandwidths, row by row.
     */
    public Probe
    {
        latencyUs = copy(latencyUs);
        bandwidthGBps = copy(bandwidthGBps);
    }

    /**
     * A matrix of values with null on the diagonal, from a square array whose diagonal is ignored.
     *
     * @param values the values, {@code values[from][to]}.
     * @return the rows.
     */
    public static List<List<Double>> matrix(final double[][] values)
    {
        final List<List<Double>> rows = new ArrayList<>(values.length);
        for (int from = 0; from < values.length; from++)
        {
            final List<Double> row = new ArrayList<>(values.length);
            for (int to = 0; to < values.length; to++)
            {
                row.add(from == to ? null : values[from][to]);
            }
            rows.add(Collections.unmodifiableList(row));
        }
        return Collections.unmodifiableList(rows);
    }

    private static List<List<Double>> copy(final List<List<Double>> rows)
    {
        // List.copyOf refuses the nulls of the diagonal.
        final List<List<Double>> copy = new ArrayList<>(rows.size());
        for (final List<Double> row : rows)
        {
            copy.add(Collections.unmodifiableList(new ArrayList<>(row)));
        }
        return Collections.unmodifiableList(copy);
    }
}
