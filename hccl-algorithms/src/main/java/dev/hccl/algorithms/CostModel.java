package dev.hccl.algorithms;

import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.CollectiveAlgorithm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one place that chooses by cost: for one operation on one layout, the catalog's algorithms that the model weighs
 * ({@link CostedAlgorithm#weighedOn}), each admitted within its {@link AutoLimits} and where it can run
 * ({@link CostedAlgorithm#canRun}), priced by a {@link TuningTable} under a {@link WireProtocol}; the cheapest wins, a
 * tie going to the earlier in catalog order. Immutable; {@link #cheapest} allocates nothing, as it runs on every call.
 */
public final class CostModel
{
    /**
     * One algorithm the model may choose.
     *
     * @param name      its name in the catalog, as HCCL spells it.
     * @param algorithm the algorithm.
     * @param costed    the same algorithm, as it predicts its time.
     * @param auto      where the model may choose it.
     */
    public record Candidate(String name, CollectiveAlgorithm algorithm, CostedAlgorithm costed, AutoLimits auto)
    {
    }

    private final Operation operation;
    private final RankLayout layout;
    private final TuningTable tuning;
    private final Candidate[] candidates;

    private CostModel(
        final Operation operation, final RankLayout layout, final TuningTable tuning, final Candidate[] candidates)
    {
        this.operation = operation;
        this.layout = layout;
        this.tuning = tuning;
        this.candidates = candidates;
    }

    /**
     * The model of one operation on one layout.
     *
     * @param catalog   the algorithms and the limits they are registered with.
     * @param tuning    the figures that price them.
     * @param operation the operation.
     * @param layout    the ranks' nodes.
     * @return the model; {@link #isEmpty()} when the operation has no costed algorithm there.
     */
    public static CostModel of(
        final AlgorithmCatalog catalog, final TuningTable tuning, final Operation operation, final RankLayout layout)
    {
        return of(catalog, tuning, operation, layout, false);
    }

    /**
     * The model of one operation on one layout, whose ranks may share a node arena.
     *
     * @param catalog   the algorithms and the limits they are registered with.
     * @param tuning    the figures that price them.
     * @param operation the operation.
     * @param layout    the ranks' nodes.
     * @param nodeArena whether the ranks share a node arena: the algorithms that need one
     *                  ({@link CostedAlgorithm#needsNodeArena()}) are weighed only then, and on one node.
     * @return the model; {@link #isEmpty()} when the operation has no costed algorithm there.
     */
    public static CostModel of(final AlgorithmCatalog catalog, final TuningTable tuning, final Operation operation,
        final RankLayout layout, final boolean nodeArena)
    {
        final boolean arenaHere = nodeArena && layout.nodeCount() == 1;
        final List<Candidate> list = new ArrayList<>();
        for (final CollectiveAlgorithm algorithm : catalog.algorithmsFor(operation))
        {
            if (algorithm instanceof CostedAlgorithm costed && costed.weighedOn(layout) &&
                (arenaHere || !costed.needsNodeArena()))
            {
                final String name = catalog.nameOf(operation, algorithm);
                list.add(new Candidate(name, algorithm, costed, catalog.autoLimits(operation, name)));
            }
        }
        return new CostModel(operation, layout, tuning, list.toArray(new Candidate[0]));
    }

    /**
     * @return whether no algorithm is weighed at all.
     */
    public boolean isEmpty()
    {
        return candidates.length == 0;
    }

    /**
     * The cheapest candidate admitted at a size.
     *
     * @param bytes     the size the limits and {@link CostedAlgorithm#canRun} are checked at.
     * @param wireBytes the bytes on the wire the candidates are priced for ({@link WireProtocol#wireBytes}).
     * @param links     the link figures.
     * @param protocol  the protocol that carries the operation.
     * @return the candidate; null when none is admitted.
     */
    public Candidate cheapest(
        final long bytes, final long wireBytes, final LinkCosts links, final WireProtocol protocol)
    {
        Candidate best = null;
        double bestSeconds = Double.POSITIVE_INFINITY;
        for (final Candidate candidate : candidates)
        {
            if (!admitted(candidate, bytes))
            {
                continue;
            }
            final double seconds = seconds(candidate, wireBytes, links, protocol);
            if (best == null || seconds < bestSeconds)
            {
                best = candidate;
                bestSeconds = seconds;
            }
        }
        return best;
    }

    /**
     * Every admitted candidate's predicted time, as {@link #cheapest} weighs them.
     *
     * @param bytes     as for {@link #cheapest}.
     * @param wireBytes as for {@link #cheapest}.
     * @param links     the link figures.
     * @param protocol  the protocol.
     * @return seconds by name, in catalog order.
     */
    public Map<String, Double> predictions(
        final long bytes, final long wireBytes, final LinkCosts links, final WireProtocol protocol)
    {
        final Map<String, Double> predicted = new LinkedHashMap<>();
        for (final Candidate candidate : candidates)
        {
            if (admitted(candidate, bytes))
            {
                predicted.put(candidate.name(), seconds(candidate, wireBytes, links, protocol));
            }
        }
        return predicted;
    }

    /**
     * The predicted time of the cheapest admitted candidate.
     *
     * @param bytes     as for {@link #cheapest}.
     * @param wireBytes as for {@link #cheapest}.
     * @param links     the link figures.
     * @param protocol  the protocol.
     * @return seconds; infinite when none is admitted.
     */
    public double cheapestSeconds(
        final long bytes, final long wireBytes, final LinkCosts links, final WireProtocol protocol)
    {
        final Candidate best = cheapest(bytes, wireBytes, links, protocol);
        return best == null ? Double.POSITIVE_INFINITY : seconds(best, wireBytes, links, protocol);
    }

    /** Within its limits, and where the algorithm can run at all. */
    private boolean admitted(final Candidate candidate, final long bytes)
    {
        return candidate.auto().admit(layout.worldSize(), bytes) &&
            candidate.costed().canRun(operation, layout.worldSize(), bytes);
    }

    private double seconds(
        final Candidate candidate, final long wireBytes, final LinkCosts links, final WireProtocol protocol)
    {
        return tuning.wireSeconds(candidate.name(), candidate.costed(), operation, layout, wireBytes, links, protocol);
    }
}
