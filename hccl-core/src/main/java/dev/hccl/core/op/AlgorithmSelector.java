package dev.hccl.core.op;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.algorithms.CostModel;
import dev.hccl.algorithms.CostedAlgorithm;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.algorithms.TuningTable;
import dev.hccl.algorithms.WireProtocol;
import dev.hccl.api.AlgorithmChoice;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.RankLayout;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllGatherVAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.AllToAllAlgorithm;
import dev.hccl.api.spi.AllToAllVAlgorithm;
import dev.hccl.api.spi.BarrierAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
import dev.hccl.api.spi.CollectiveAlgorithm;
import dev.hccl.api.spi.GatherAlgorithm;
import dev.hccl.api.spi.ReduceAlgorithm;
import dev.hccl.api.spi.ReduceScatterAlgorithm;
import dev.hccl.api.spi.ReduceScatterVAlgorithm;
import dev.hccl.api.spi.ScatterAlgorithm;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which algorithm runs an operation of a given size: the one {@code HCCL_ALGO} forces, else the cheapest by the
 * cost model.
 * <p>
 * <b>The cost model.</b> Every algorithm of the catalog that implements the operation predicts its time from its
 * alpha-beta-gamma formula ({@link CostedAlgorithm#predictSeconds(Operation, RankLayout, long, LinkCosts)}) for
 * the communicator's layout of nodes and the parameters of each link class: the local links within a node, the
 * network between nodes; priced by {@link TuningTable#predictSeconds} for the operation's {@link WireProtocol}
 * ({@link WireProtocol#HALF} for FP16 and BF16 reductions, {@link WireProtocol#QUARTER} for FP8 ones, whose reductions
 * cost more per byte; else plain). The cheapest wins; a tie goes to the earlier in catalog order. The link parameters are the defaults
 * ({@link LinkCosts#DEFAULTS}: a server's loopback, assumed from the figures measured where {@code docs/ALGORITHMS.md}
 * checked the crossovers, and 10 GbE) until the topology probe gives measured ones ({@link #linkCosts(LinkCosts)}).
 * <p>
 * <b>Determinism.</b> Every algorithm of the catalog reduces each element in an order fixed by the ranks alone,
 * never by the order in which messages arrive, and distributes one result, so all ranks hold the same bits and a
 * repetition gives them again. The choice depends on the operation, the size, the layout and the link parameters;
 * every rank holds the same of each (measured figures are the measuring ranks', shared with all by the probe), so
 * all ranks choose alike. Under
 * {@code HCCL_DETERMINISTIC=true} measured parameters are refused, so that the same call takes the same algorithm in
 * every run.
 */
public final class AlgorithmSelector
{
    private static final Logger LOG = LoggerFactory.getLogger(AlgorithmSelector.class);

    private final AlgorithmCatalog catalog;
    private final AlgoOverride override;
    private final RankLayout layout;
    private final boolean deterministic;
    /** Per operation, the one place that chooses by cost (this layout's candidates, priced by the tuning table). */
    private final Map<Operation, CostModel> models = new EnumMap<>(Operation.class);
    /** What HCCL_ALGO forces per operation, with the name reported for it. */
    private final Map<Operation, CollectiveAlgorithm> forcedAlgorithms = new EnumMap<>(Operation.class);
    private final Map<Operation, String> forcedNames = new EnumMap<>(Operation.class);
    private volatile LinkCosts links;
    /** The (operation, size class) pairs whose choice DEBUG has explained. */
    private final Set<Long> explained = ConcurrentHashMap.newKeySet();
    /**
     * The latest choices, {@link #MEMO_SLOTS} per operation, by size: a call of a size seen before (a training step's
     * buckets, a benchmark's loop) takes its algorithm without pricing every candidate again. An entry is immutable,
     * so a racing reader sees a whole one or another; a stale one is told by its size, type and link figures.
     */
    private final Choice[] memo = new Choice[Operation.values().length * MEMO_SLOTS];

    /**
     * @param override      what the user forces.
     * @param layout        the communicator's layout: with more than one node, level1 of the override decides.
     * @param deterministic {@code HCCL_DETERMINISTIC}: never let a measurement sway the choice.
     */
    AlgorithmSelector(final AlgoOverride override, final RankLayout layout, final boolean deterministic)
    {
        this(override, layout, deterministic, LinkCosts.DEFAULTS);
    }

    /**
     * @param override      what the user forces.
     * @param layout        the communicator's layout.
     * @param deterministic whether only the defaults decide.
     * @param defaults      the link figures until a probe measures them: {@link LinkCosts#SHARED_MEMORY_DEFAULTS}
     *                      when the ranks of a node talk through shared memory, else {@link LinkCosts#DEFAULTS}.
     */
    AlgorithmSelector(
        final AlgoOverride override, final RankLayout layout, final boolean deterministic, final LinkCosts defaults)
    {
        this(InstalledAlgorithms.catalog(), override, layout, deterministic, defaults, false);
    }

    /**
     * @param override      what the user forces.
     * @param layout        the communicator's layout.
     * @param deterministic whether only the defaults decide.
     * @param defaults      the link figures until a probe measures them.
     * @param nodeArena     whether the communicator's ranks share a node arena, which the algorithms that need one
     *                      run on ({@link CostedAlgorithm#needsNodeArena()}); every rank has the same answer.
     */
    public AlgorithmSelector(final AlgoOverride override, final RankLayout layout, final boolean deterministic,
        final LinkCosts defaults, final boolean nodeArena)
    {
        this(InstalledAlgorithms.catalog(), override, layout, deterministic, defaults, nodeArena);
    }

    /**
     * @param catalog       the algorithms and their limits.
     * @param override      what the user forces, parsed against {@code catalog}.
     * @param layout        the communicator's layout.
     * @param deterministic whether only the defaults decide.
     * @param defaults      the link figures until a probe measures them.
     * @param nodeArena     whether the communicator's ranks share a node arena.
     */
    AlgorithmSelector(
        final AlgorithmCatalog catalog, final AlgoOverride override, final RankLayout layout,
        final boolean deterministic, final LinkCosts defaults, final boolean nodeArena)
    {
        this.catalog = catalog;
        this.override = override;
        this.layout = layout;
        this.deterministic = deterministic;
        this.links = defaults;
        for (final Operation op : Operation.values())
        {
            models.put(op, CostModel.of(catalog, TuningTable.standard(), op, layout, nodeArena));
            force(op, nodeArena);
        }
    }

    /**
     * Resolves what HCCL_ALGO forces for an operation, once. Across nodes the level form composes the levels as HCCL
     * does: {@code level1:X} runs the hierarchical schedule with X between nodes, for the operations the hierarchy
     * has; a bare name forces that algorithm over all ranks.
     */
    private void force(final Operation op, final boolean nodeArena)
    {
        final String name = override.forced(op, layout.nodeCount() > 1, catalog);
        if (name == null)
        {
            return;
        }
        final CollectiveAlgorithm algorithm = catalog.find(op, name, CollectiveAlgorithm.class);
        if (algorithm == null)
        {
            // AlgoOverride.parse accepted the name for this operation, so the catalog has it.
            throw new IllegalStateException("HCCL_ALGO names " + name + " for " + op.displayName() + ", not found");
        }
        if (algorithm instanceof CostedAlgorithm costed && costed.needsNodeArena() &&
            !(nodeArena && layout.nodeCount() == 1))
        {
            LOG.warn("HCCL_ALGO forces {} for {}, which runs in the node arena, but these {} ranks share none (ranks " +
                "on several nodes, shared memory off or HCCL_SHM_ARENA_SIZE=0, or a communicator split from " +
                "another); taking the cost model's choice", name, op.displayName(), layout.worldSize());
            return;
        }
        final CollectiveAlgorithm composed = layout.nodeCount() > 1 && override.levelForm(op) ?
            catalog.withLevel1(op, algorithm) : null;
        forcedAlgorithms.put(op, composed != null ? composed : algorithm);
        forcedNames.put(op, composed != null ? composed.name() + " with level1 " + name : name);
    }

    /**
     * Takes measured link parameters for the choices from now on, unless deterministic.
     *
     * @param measured the probe's figures, the same on every rank.
     * @return whether they are used.
     */
    public boolean linkCosts(final LinkCosts measured)
    {
        if (deterministic)
        {
            return false;
        }
        links = measured;
        return true;
    }

    /**
     * @return the link parameters the cost model uses now.
     */
    public LinkCosts linkCosts()
    {
        return links;
    }

    AllReduceAlgorithm allReduce(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.ALL_REDUCE, AllReduceAlgorithm.class, bytes, null);
    }

    AllReduceAlgorithm allReduce(final OpContext ctx, final long bytes, final DataType type)
    {
        return select(ctx, Operation.ALL_REDUCE, AllReduceAlgorithm.class, bytes, type);
    }

    AllGatherAlgorithm allGather(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.ALL_GATHER, AllGatherAlgorithm.class, bytes, null);
    }

    ReduceScatterAlgorithm reduceScatter(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.REDUCE_SCATTER, ReduceScatterAlgorithm.class, bytes, null);
    }

    ReduceScatterAlgorithm reduceScatter(final OpContext ctx, final long bytes, final DataType type)
    {
        return select(ctx, Operation.REDUCE_SCATTER, ReduceScatterAlgorithm.class, bytes, type);
    }

    BroadcastAlgorithm broadcast(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.BROADCAST, BroadcastAlgorithm.class, bytes, null);
    }

    ReduceAlgorithm reduce(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.REDUCE, ReduceAlgorithm.class, bytes, null);
    }

    ReduceAlgorithm reduce(final OpContext ctx, final long bytes, final DataType type)
    {
        return select(ctx, Operation.REDUCE, ReduceAlgorithm.class, bytes, type);
    }

    AllToAllAlgorithm allToAll(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.ALL_TO_ALL, AllToAllAlgorithm.class, bytes, null);
    }

    BarrierAlgorithm barrier(final OpContext ctx)
    {
        return select(ctx, Operation.BARRIER, BarrierAlgorithm.class, 0, null);
    }

    AllGatherVAlgorithm allGatherV(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.ALL_GATHER_V, AllGatherVAlgorithm.class, bytes, null);
    }

    ReduceScatterVAlgorithm reduceScatterV(final OpContext ctx, final long bytes, final DataType type)
    {
        return select(ctx, Operation.REDUCE_SCATTER_V, ReduceScatterVAlgorithm.class, bytes, type);
    }

    AllToAllVAlgorithm allToAllV(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.ALL_TO_ALL_V, AllToAllVAlgorithm.class, bytes, null);
    }

    ScatterAlgorithm scatter(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.SCATTER, ScatterAlgorithm.class, bytes, null);
    }

    GatherAlgorithm gather(final OpContext ctx, final long bytes)
    {
        return select(ctx, Operation.GATHER, GatherAlgorithm.class, bytes, null);
    }

    /**
     * The choice for an operation and size, with its reason, as {@link dev.hccl.api.Communicator#algorithmFor}
     * gives it: priced as plain data, as FP32's would be.
     *
     * @param op    a collective.
     * @param bytes not negative.
     * @return the choice.
     */
    public AlgorithmChoice choice(final Operation op, final long bytes)
    {
        return choice(op, bytes, WireProtocol.PLAIN, bytes);
    }

    /**
     * The choice for an operation, size and data type, with its reason: what an operation on {@code type} runs.
     *
     * @param op    a collective.
     * @param bytes not negative.
     * @param type  the elements, which decide the protocol ({@link WireProtocol#of}).
     * @return the choice.
     */
    public AlgorithmChoice choice(final Operation op, final long bytes, final DataType type)
    {
        final WireProtocol protocol = WireProtocol.of(op, type);
        return choice(op, bytes, protocol, protocol.logicalBytes(bytes, type));
    }

    private AlgorithmChoice choice(final Operation op, final long bytes, final WireProtocol protocol,
        final long logicalBytes)
    {
        final CostModel model = models.get(op);
        if (bytes < 0 || model.isEmpty())
        {
            throw new IllegalArgumentException(bytes < 0 ? "bytes must not be negative, got " + bytes :
                op.displayName() + " is not a collective with an algorithm");
        }
        final String forced = forcedName(op, bytes);
        final LinkCosts costs = links;
        final long wireBytes = protocol.wireBytes(logicalBytes);
        final Map<String, Double> predicted = forced != null ? Map.of() :
            model.predictions(bytes, wireBytes, costs, protocol);
        final String name = forced != null ? forcedNames.get(op) :
            model.cheapest(bytes, wireBytes, costs, protocol).name();
        return new AlgorithmChoice(op, bytes, name, forced != null, predicted,
            layout + ", " + links + (protocol == WireProtocol.PLAIN ? "" : ", protocol " + protocol));
    }

    private static void chose(final OpContext ctx, final String name)
    {
        if (null != ctx)
        {
            ctx.chose(name);
        }
    }

    @Override
    public String toString()
    {
        return "algorithms " + override + " on " + layout +
            (layout.nodeCount() > 1 ? " (level1 decides)" : " (level0 decides)") +
            (deterministic ? ", deterministic" : "");
    }

    /**
     * Chooses, and tells the operation's record which algorithm runs it ({@code ctx} null: nobody).
     *
     * @param type the elements, which decide the protocol ({@link WireProtocol#of}); null for plain bytes.
     */
    private <T> T select(
        final OpContext ctx, final Operation op, final Class<T> role, final long bytes, final DataType type)
    {
        if (forcedName(op, bytes) != null)
        {
            chose(ctx, forcedNames.get(op));
            return role.cast(forcedAlgorithms.get(op));
        }
        final LinkCosts costs = links;
        final int slot = op.ordinal() * MEMO_SLOTS + (int)((bytes * 0x9E3779B97F4A7C15L) >>> 61);
        final Choice memoized = memo[slot];
        // The protocol and its sizes follow from the operation and the type, so these make the key.
        if (memoized != null && memoized.bytes == bytes && memoized.type == type && memoized.links == costs)
        {
            chose(ctx, memoized.name);
            return role.cast(memoized.algorithm);
        }
        final WireProtocol protocol = null == type ? WireProtocol.PLAIN : WireProtocol.of(op, type);
        final long logicalBytes = null == type ? bytes : protocol.logicalBytes(bytes, type);
        final CostModel.Candidate best = models.get(op).cheapest(bytes, protocol.wireBytes(logicalBytes), costs,
            protocol);
        memo[slot] = new Choice(bytes, type, costs, best.name(), best.algorithm());
        chose(ctx, best.name());
        // Once per operation, protocol and power-of-two size, so that DEBUG tells why without a line per call.
        final long sizeClass = (op.ordinal() * (long)WireProtocol.values().length + protocol.ordinal()) * 64L +
            (63 - Long.numberOfLeadingZeros(bytes));
        if (LOG.isDebugEnabled() && explained.add(sizeClass))
        {
            LOG.debug("{} of {} bytes on {}: {}", op.displayName(), bytes, layout,
                choice(op, bytes, protocol, logicalBytes).describe() + " with " + costs);
        }
        return role.cast(best.algorithm());
    }

    /** Slots of {@link #memo} per operation: a power of two, eight by the top three bits of a size's hash. */
    private static final int MEMO_SLOTS = 8;

    /** A choice the cost model made, with what it was made for. */
    private record Choice(long bytes, DataType type, LinkCosts links, String name, CollectiveAlgorithm algorithm)
    {
    }

    /** The name HCCL_ALGO forces for this operation and size, or null for the cost model's choice. */
    private String forcedName(final Operation op, final long bytes)
    {
        final String name = forcedNames.get(op);
        if (name == null)
        {
            return null;
        }
        if (forcedAlgorithms.get(op) instanceof CostedAlgorithm costed && !costed.canRun(op, layout.worldSize(), bytes))
        {
            LOG.warn("HCCL_ALGO forces {} for {} of {} bytes over {} ranks, more than it can run; taking the cost " +
                "model's choice", name, op.displayName(), bytes, layout.worldSize());
            return null;
        }
        return name;
    }
}
