package dev.hccl.algorithms;

import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;

import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The one place for the cost model's tuning figures, as NCCL's {@code tuning.cc} keeps its latencies and bandwidth
 * factors per algorithm and protocol: per algorithm, the {@link AutoLimits} within which the cost model may choose
 * it and, per {@link WireProtocol}, an {@link Adjustment} of its links; per protocol, what its computation costs
 * ({@link ProtocolCosts}). Immutable; {@link #standard()} is the table of this module's algorithms, whose
 * registrations in {@link AlgorithmCatalog#standard()} read their limits from it. A plug-in's algorithm has no row:
 * it keeps the limits it registers with and is priced unadjusted.
 * <p>
 * The price of a collective ({@link #predictSeconds}) is the algorithm's own alpha-beta-gamma formula, given the
 * protocol's bytes on the wire and links whose latency, bandwidth and reduction figures the adjustment and the
 * protocol scale. The per-protocol computation costs ({@link ProtocolCosts}) are also what the training module
 * prices a whole step's gradient synchronisation with: the step's shape (narrowing, selection, the low-rank
 * products) is the training helpers' business, and its prices live with them.
 */
public final class TuningTable
{
    /**
     * Factors on an algorithm's link figures under one protocol: {@code alpha * latencyFactor},
     * {@code beta * bandwidthFactor}. Above 1 where the algorithm is measured slower than its formula says.
     *
     * @param latencyFactor   on the seconds per message, above 0.
     * @param bandwidthFactor on the seconds per byte on the wire, above 0.
     */
    public record Adjustment(double latencyFactor, double bandwidthFactor)
    {
        /** The formula as it stands: what an algorithm gets where nothing was measured. */
        public static final Adjustment UNMEASURED = new Adjustment(1.0, 1.0);

        /**
         * @param latencyFactor   finite, above 0.
         * @param bandwidthFactor finite, above 0.
         */
        public Adjustment
        {
            positive("latencyFactor", latencyFactor);
            positive("bandwidthFactor", bandwidthFactor);
        }
    }

    /**
     * What a protocol's computation costs, each in units of the links' {@code gamma} (the seconds to reduce one
     * byte of FP32), so that the figures follow the links' reduction speed wherever it is measured or assumed.
     *
     * @param reduction seconds per wire byte reduced, in gammas: 1 for FP32's own kernel.
     * @param encode    seconds per logical byte to make the wire payload before the collective (narrowing; the
     *                  top-k selection with its error feedback), in gammas; 0 when the buffer goes as it is. For
     *                  {@link WireProtocol#LOW_RANK}, per logical byte and column of the factors: the products
     *                  M Q, M^T P and P Q^T, each a multiply-add per element and column.
     * @param decode    seconds per wire byte received to make the dense result after it (widening; adding the
     *                  gathered pairs in), in gammas. For {@link WireProtocol#LOW_RANK}, per logical byte whatever
     *                  the rank: adding the error in, writing the result and the new error out.
     */
    public record ProtocolCosts(double reduction, double encode, double decode)
    {
        /**
         * @param reduction above 0.
         * @param encode    not negative.
         * @param decode    not negative.
         */
        public ProtocolCosts
        {
            positive("reduction", reduction);
            if (!(encode >= 0 && decode >= 0 && Double.isFinite(encode + decode)))
            {
                throw new IllegalArgumentException("encode and decode must be finite, not negative: " + encode +
                    ", " + decode);
            }
        }
    }

    /** One algorithm's row. */
    private record Row(AutoLimits limits, Map<WireProtocol, Adjustment> adjustments)
    {
    }

    private static final Adjustment UNMEASURED = Adjustment.UNMEASURED;

    /*
     * The hierarchical algorithm's crossovers between its own schedules, which every rank takes from the size and the
     * layout alone, so that the ranks agree (ALGORITHMS.md and PERFORMANCE.md give the measurements).
     */

    /**
     * Even layouts' all-reduces from this size on overlap the levels (a rail thread runs level1 on one piece while the
     * caller reduces the next); below it the pieces' extra messages cost more than the overlap saves (measured on the
     * simulated 2 x 4 cluster).
     */
    static final long HIERARCHICAL_PIPELINE_MIN_BYTES = 8L << 20;
    /** Pieces of a pipelined all-reduce: the first piece's reduction and the last one's gathering are not hidden. */
    static final int HIERARCHICAL_PIPELINE_PIECES = 4;
    /**
     * Even layouts of more than two ranks per node all-reduce through the node leaders up to this size: measured on the
     * simulated 2 x 4 cluster, the leaders beat the rails up to 32 KiB and tie at 128 KiB.
     */
    static final long HIERARCHICAL_LEADERS_MAX_BYTES = 64 << 10;
    /**
     * Within a node, a broadcast below this many bytes takes the binomial tree ({@code ceil(log2 L)} hops of the whole
     * message), from it on scatter + ring all-gather (each byte about twice): the crossover measured on loopback for
     * the flat choice (docs/ALGORITHMS.md), since a node's ranks talk over the same kind of local link.
     */
    static final long HIERARCHICAL_TREE_BROADCAST_MAX_BYTES = 64 * 1024;

    /**
     * The node arena's piece: the bytes one step of {@link ArenaAlgorithm} moves through each region (at most the
     * region's half). Small enough that a piece copied in is still in cache when it is reduced and copied out, large
     * enough that a step's signals are few against its copies.
     */
    static final long ARENA_PIECE_BYTES = 256 * 1024;
    /**
     * Up to this size every rank reduces a whole arena all-reduce itself (one round of signals); above it each
     * reduces its slice and copies the others' out (two rounds, each byte reduced once).
     */
    static final long ARENA_ONE_ROUND_MAX_BYTES = 16 * 1024;
    /**
     * From this size on, an arena operation whose buffer is registered ({@code Communicator.allocateRegistered})
     * lets the others read it in place instead of copying it into the arena; below it the wait for every member at
     * the operation's end costs more than the copy saves.
     */
    static final long ARENA_IN_PLACE_MIN_BYTES = 64 * 1024;
    /**
     * A round of the arena's signals, as a fraction of a message's latency on the node's links: a cache line that
     * crosses cores, with no framing, matching or ring to pass.
     */
    static final double ARENA_SIGNAL_ALPHA = 0.25;

    /*
     * The figures. Per protocol, from the kernels and conversions timed single-threaded over 64 MiB (ALGORITHMS.md,
     * "Protocols and the tuning table"): HALF reduces at FP16's (the slower of FP16 and BF16) speed against FP32's,
     * narrows and widens as FP16 does; QUARTER reduces at the FP8 kernels' speed, scaled to HALF's by FP16's speed in
     * the same run, and converts nothing (the caller's buffer is FP8 already); SPARSE selects by quickselect with
     * error feedback at 1 % of the elements and adds the gathered pairs in at random places. Per algorithm and
     * protocol nothing has been measured yet: every adjustment is UNMEASURED, the row is where a measurement goes.
     * The limits are fullmesh's alone (ALGORITHMS.md, "The automatic choice: the cost model" and "The measurements
     * behind the one-node crossovers"): the model prices its n-1 whole-buffer messages as one latency, which holds up
     * to a few KiB and while each of at most 4 ranks has a core for its sends.
     * LOW_RANK: PowerSgdCodec's start and finish timed single-threaded over 16 MiB of gradients at ranks 1 and 4
     * (7.6 and 16.7 gammas per byte, against a Java loop adding two FP32 arrays of that size), fitted as 4.5 gammas
     * per byte plus 3.0 per byte and column; the orthogonalisations (n and m times rank squared) are left out.
     */
    private static final TuningTable STANDARD = new TuningTable(
        Map.of(
            WireProtocol.PLAIN, new ProtocolCosts(1.0, 0.0, 0.0),
            WireProtocol.HALF, new ProtocolCosts(6.0, 2.6, 4.2),
            WireProtocol.QUARTER, new ProtocolCosts(3.6, 0.0, 0.0),
            WireProtocol.SPARSE, new ProtocolCosts(1.0, 8.0, 7.0),
            WireProtocol.LOW_RANK, new ProtocolCosts(1.0, 3.0, 4.5)),
        standardRows());

    private final Map<WireProtocol, ProtocolCosts> costs;
    private final Map<String, Row> rows;

    private TuningTable(final Map<WireProtocol, ProtocolCosts> costs, final Map<String, Row> rows)
    {
        for (final WireProtocol protocol : WireProtocol.values())
        {
            if (!costs.containsKey(protocol))
            {
                throw new IllegalArgumentException("no costs for " + protocol);
            }
        }
        this.costs = Collections.unmodifiableMap(new EnumMap<>(costs));
        this.rows = Collections.unmodifiableMap(rows);
    }

    /**
     * The table of this module's algorithms.
     *
     * @return the table.
     */
    public static TuningTable standard()
    {
        return STANDARD;
    }

    /**
     * @return the names that have a row, as {@code HCCL_ALGO} spells them (in lower case).
     */
    public Set<String> algorithms()
    {
        return rows.keySet();
    }

    /**
     * @param name an algorithm's name, in any case.
     * @return where the cost model may choose it; {@link AutoLimits#NONE} for a name without a row.
     */
    public AutoLimits autoLimits(final String name)
    {
        final Row row = rows.get(key(name));
        return row == null ? AutoLimits.NONE : row.limits();
    }

    /**
     * @param name     an algorithm's name, in any case.
     * @param protocol the protocol.
     * @return its adjustment; {@link Adjustment#UNMEASURED} for a name without a row.
     */
    public Adjustment adjustment(final String name, final WireProtocol protocol)
    {
        final Row row = rows.get(key(name));
        return row == null ? UNMEASURED : row.adjustments().get(protocol);
    }

    /**
     * @param protocol the protocol.
     * @return what its computation costs.
     */
    public ProtocolCosts costs(final WireProtocol protocol)
    {
        return costs.get(protocol);
    }

    /**
     * This table with one adjustment replaced or added: for a measurement to try before it is written into the table.
     *
     * @param name       an algorithm's name.
     * @param protocol   the protocol.
     * @param adjustment its factors.
     * @return a new table.
     */
    public TuningTable withAdjustment(final String name, final WireProtocol protocol, final Adjustment adjustment)
    {
        final Map<String, Row> copy = new LinkedHashMap<>(rows);
        final Row row = copy.getOrDefault(key(name), row(AutoLimits.NONE));
        final Map<WireProtocol, Adjustment> adjustments = new EnumMap<>(row.adjustments());
        adjustments.put(protocol, adjustment);
        copy.put(key(name), new Row(row.limits(), Collections.unmodifiableMap(adjustments)));
        return new TuningTable(costs, copy);
    }

    /**
     * The predicted time of one collective carried by a protocol: the algorithm's formula for the protocol's bytes
     * on the wire, with links adjusted for this algorithm and protocol and reducing at the protocol's speed. Under
     * {@link WireProtocol#PLAIN}, with an unmeasured adjustment, exactly the algorithm's own prediction.
     *
     * @param name         the algorithm's name in the catalog, in any case.
     * @param algorithm    the algorithm.
     * @param operation    one it implements.
     * @param layout       the ranks' nodes.
     * @param logicalBytes the size as {@link CostedAlgorithm#predictSeconds} counts it, of the logical payload
     *                     ({@link WireProtocol#logicalBytes}): an all-reduce of N FP32 elements is 4N under
     *                     {@link WireProtocol#PLAIN} and {@link WireProtocol#HALF} alike.
     * @param links        the link figures.
     * @param protocol     {@link WireProtocol#PLAIN}, {@link WireProtocol#HALF} or {@link WireProtocol#QUARTER}.
     * @return seconds.
     * @throws IllegalArgumentException for {@link WireProtocol#SPARSE}, which changes the operation and needs the
     *                                  fraction sent, and for {@link WireProtocol#LOW_RANK}, which
     *                                  needs the rank: each is priced as a training step, by the training module.
     */
    public double predictSeconds(
        final String name, final CostedAlgorithm algorithm, final Operation operation, final RankLayout layout,
        final long logicalBytes, final LinkCosts links, final WireProtocol protocol)
    {
        if (protocol == WireProtocol.SPARSE)
        {
            throw new IllegalArgumentException("a sparse collective is priced as a training step, with its " +
                "fraction (hccl-training's StepPrices)");
        }
        if (protocol == WireProtocol.LOW_RANK)
        {
            throw new IllegalArgumentException("a low-rank collective is priced as a training step, with its " +
                "rank (hccl-training's StepPrices)");
        }
        return wireSeconds(name, algorithm, operation, layout, protocol.wireBytes(logicalBytes), links, protocol);
    }

    /** The formula for bytes already on the wire, with the links scaled; allocates only where a factor is not 1. */
    double wireSeconds(
        final String name, final CostedAlgorithm algorithm, final Operation operation, final RankLayout layout,
        final long wireBytes, final LinkCosts links, final WireProtocol protocol)
    {
        final Adjustment adjustment = adjustment(name, protocol);
        final double reduction = costs(protocol).reduction();
        final LinkCosts priced = adjustment.equals(UNMEASURED) && reduction == 1.0 ? links :
            new LinkCosts(scaled(links.local(), adjustment, reduction), scaled(links.network(), adjustment, reduction),
                links.source());
        return algorithm.predictSeconds(operation, layout, wireBytes, priced);
    }

    private static CostParameters scaled(final CostParameters link, final Adjustment adjustment, final double reduction)
    {
        return new CostParameters(link.alpha() * adjustment.latencyFactor(),
            link.beta() * adjustment.bandwidthFactor(), link.gamma() * reduction);
    }

    /** A row of {@code limits} whose adjustments under every protocol are still unmeasured. */
    private static Row row(final AutoLimits limits)
    {
        final Map<WireProtocol, Adjustment> adjustments = new EnumMap<>(WireProtocol.class);
        for (final WireProtocol protocol : WireProtocol.values())
        {
            adjustments.put(protocol, UNMEASURED);
        }
        return new Row(limits, Collections.unmodifiableMap(adjustments));
    }

    /** Each standard algorithm's limits; every adjustment is still unmeasured (a measured one goes in its row). */
    private static Map<String, Row> standardRows()
    {
        final Map<String, Row> rows = new LinkedHashMap<>();
        rows.put(key(RingAlgorithm.NAME), row(AutoLimits.NONE));
        rows.put(key(FullMeshAlgorithm.NAME), row(new AutoLimits(4 * 1024, 4)));
        rows.put(key(BinomialTreeAlgorithm.NAME), row(AutoLimits.NONE));
        rows.put(key(HalvingDoublingAlgorithm.NAME), row(AutoLimits.NONE));
        rows.put(key(HierarchicalAlgorithm.NAME), row(AutoLimits.NONE));
        rows.put(key(BruckAllGatherAlgorithm.NAME), row(AutoLimits.NONE));
        rows.put(key(PairwiseAllToAllAlgorithm.NAME), row(AutoLimits.NONE));
        rows.put(key(DisseminationBarrierAlgorithm.NAME), row(AutoLimits.NONE));
        rows.put(key(ArenaAlgorithm.NAME), row(AutoLimits.NONE));
        return rows;
    }

    private static String key(final String name)
    {
        return name.toLowerCase(Locale.ROOT);
    }

    private static void positive(final String what, final double value)
    {
        if (!(value > 0 && Double.isFinite(value)))
        {
            throw new IllegalArgumentException(what + " must be finite and above 0, got " + value);
        }
    }
}
