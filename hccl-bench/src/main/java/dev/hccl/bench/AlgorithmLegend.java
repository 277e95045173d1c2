package dev.hccl.bench;

import dev.hccl.api.AlgorithmChoice;

import java.util.List;

/**
 * The name a sweep's line has in {@code --plot}'s legend. A sweep with {@code --algo} is named by it; the default
 * sweep by the algorithms the communicator chose over it, each with the size it gives way at:
 * {@code auto (fullmesh < 8 KiB, ring)}, or {@code HCCL_ALGO (ring)} when the environment forced them. The names come
 * from {@link AlgorithmChoice#algorithm()}, the value the {@code # from 8 B:} lines above the table print.
 */
final class AlgorithmLegend
{
    private AlgorithmLegend()
    {
    }

    /**
     * The legend name of one sweep.
     *
     * @param sweepLabel the sweep's label: an {@code --algo} value or {@link BenchOptions#DEFAULT_ALGO}.
     * @param changes    the choices at the sizes where the choice changes, smallest size first, as
     *                   {@code BenchSession} finds them; empty for an operation without algorithms.
     * @return the name.
     */
    static String name(final String sweepLabel, final List<AlgorithmChoice> changes)
    {
        if (!BenchOptions.DEFAULT_ALGO.equals(sweepLabel) || changes.isEmpty())
        {
            return sweepLabel;
        }
        final boolean forced = changes.stream().anyMatch(AlgorithmChoice::forced);
        final StringBuilder name = new StringBuilder(forced ? "HCCL_ALGO (" : "auto (");
        final BandwidthPlot.SizeFormat sizes = new BandwidthPlot.SizeFormat();
        for (int i = 0; i < changes.size(); i++)
        {
            name.append(i == 0 ? "" : ", ").append(changes.get(i).algorithm());
            if (i + 1 < changes.size())
            {
                name.append(" < ").append(sizes.format(changes.get(i + 1).bytes()));
            }
        }
        return name.append(')').toString();
    }
}
