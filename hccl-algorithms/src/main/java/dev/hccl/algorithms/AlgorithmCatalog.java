package dev.hccl.algorithms;

import dev.hccl.api.Operation;
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

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;

/**
 * The algorithms there are, by operation and by the name {@code HCCL_ALGO} gives them, each with the
 * {@link AutoLimits} within which the cost model may choose it (this module's read from {@link TuningTable}). One name
 * may stand for a family with one member per operation ({@code ring}: the ring for all-reduce, all-gather and
 * reduce-scatter, and scatter + ring all-gather for broadcast); names match whatever their case.
 * {@link #installed()} adds the {@link AlgorithmPlugin}s' algorithms to this module's.
 */
public final class AlgorithmCatalog
{
    /** The name that asks for the automatic choice, as HCCL spells it. */
    public static final String AUTOMATIC = "NA";

    /** One row of the table. */
    private record Entry(CollectiveAlgorithm algorithm, AutoLimits auto)
    {
    }

    private final Map<Operation, Map<String, Entry>> byOperation = new EnumMap<>(Operation.class);
    private final Map<String, String> spelling = new LinkedHashMap<>();
    private boolean sealed;

    private AlgorithmCatalog()
    {
    }

    /**
     * The algorithms of this module, each registered for every operation it implements.
     *
     * @return a new catalog.
     */
    public static AlgorithmCatalog standard()
    {
        final AlgorithmCatalog catalog = new AlgorithmCatalog();
        catalog.registerTuned(RingAlgorithm.NAME, new RingAlgorithm());
        catalog.registerTuned(FullMeshAlgorithm.NAME, new FullMeshAlgorithm());
        catalog.registerTuned(BinomialTreeAlgorithm.NAME, new BinomialTreeAlgorithm());
        catalog.registerTuned(DoubleBinaryTreeAlgorithm.NAME, new DoubleBinaryTreeAlgorithm());
        catalog.registerTuned(HalvingDoublingAlgorithm.NAME, new HalvingDoublingAlgorithm());
        catalog.registerTuned(HierarchicalAlgorithm.NAME, HierarchicalAlgorithm.overRing());
        catalog.registerTuned(BruckAllGatherAlgorithm.NAME, new BruckAllGatherAlgorithm());
        catalog.registerTuned(PairwiseAllToAllAlgorithm.NAME, new PairwiseAllToAllAlgorithm());
        catalog.registerTuned(DisseminationBarrierAlgorithm.NAME, new DisseminationBarrierAlgorithm());
        catalog.registerTuned(ArenaAlgorithm.NAME, new ArenaAlgorithm());
        // The V collectives, scatter and gather, each under the name of the family whose schedule it follows.
        catalog.registerTuned(RingVAlgorithm.NAME, new RingVAlgorithm());
        catalog.registerTuned(PairwiseAllToAllVAlgorithm.NAME, new PairwiseAllToAllVAlgorithm());
        catalog.registerTuned(BinomialScatterGatherAlgorithm.NAME, new BinomialScatterGatherAlgorithm());
        return catalog;
    }

    /** Registers one of this module's algorithms with the limits of its row in {@link TuningTable#standard()}. */
    private void registerTuned(final String name, final CollectiveAlgorithm algorithm)
    {
        register(name, algorithm, TuningTable.standard().autoLimits(name));
    }

    /**
     * This module's algorithms and those of every {@link AlgorithmPlugin} the class loader finds, sealed.
     *
     * @param loader where to look for plug-ins.
     * @return a new catalog.
     * @throws IllegalStateException       naming the plug-in, when one fails to register (reuses a name for an
     *                                     operation that already has it, say).
     * @throws java.util.ServiceConfigurationError when a listed plug-in cannot be loaded.
     */
    public static AlgorithmCatalog installed(final ClassLoader loader)
    {
        final AlgorithmCatalog catalog = standard();
        for (final AlgorithmPlugin plugin : ServiceLoader.load(AlgorithmPlugin.class, loader))
        {
            try
            {
                plugin.register(catalog);
            }
            catch (final RuntimeException ex)
            {
                throw new IllegalStateException("algorithm plug-in " + plugin.getClass().getName() + ": " +
                    ex.getMessage(), ex);
            }
        }
        catalog.sealed = true;
        return catalog;
    }

    /**
     * {@link #installed(ClassLoader)} with this module's class loader.
     *
     * @return a new catalog.
     */
    public static AlgorithmCatalog installed()
    {
        return installed(AlgorithmCatalog.class.getClassLoader());
    }

    /**
     * Adds an algorithm under a name for every operation whose SPI interface it implements. Several algorithms may
     * share a name when they run different operations (a family).
     *
     * @param name      the name {@code HCCL_ALGO} gives it, in any case.
     * @param algorithm implements one or more of the operations' SPI interfaces; holds no state of its own, as
     *                  every communicator shares it. The cost model weighs it where it is a {@link CostedAlgorithm}.
     * @param auto      where the cost model may choose it, when it is a {@link CostedAlgorithm}.
     * @throws IllegalArgumentException when it implements no operation.
     * @throws IllegalStateException    when an operation already has an algorithm of this name, or the catalog is
     *                                  sealed (register from an {@link AlgorithmPlugin}).
     */
    public void register(final String name, final CollectiveAlgorithm algorithm, final AutoLimits auto)
    {
        registerTyped(name, algorithm, auto);
    }

    /**
     * The signature plug-ins were compiled against before algorithms had a type of their own; kept so that they
     * still link.
     *
     * @param name      the name {@code HCCL_ALGO} gives it.
     * @param algorithm a {@link CollectiveAlgorithm}, as every SPI algorithm interface is.
     * @param auto      where the cost model may choose it.
     * @deprecated register a {@link CollectiveAlgorithm}.
     */
    @Deprecated
    public void register(final String name, final Object algorithm, final AutoLimits auto)
    {
        if (!(algorithm instanceof CollectiveAlgorithm))
        {
            throw new IllegalArgumentException(name + " (" + (algorithm == null ? "null" :
                algorithm.getClass().getName()) + ") implements no operation's algorithm interface");
        }
        registerTyped(name, (CollectiveAlgorithm)algorithm, auto);
    }

    private void registerTyped(final String name, final CollectiveAlgorithm algorithm, final AutoLimits auto)
    {
        if (sealed)
        {
            throw new IllegalStateException("the catalog is in use; register " + name + " from an AlgorithmPlugin");
        }
        final String key = key(name);
        final List<Operation> ops = new ArrayList<>();
        for (final Operation op : Operation.values())
        {
            final Class<? extends CollectiveAlgorithm> role = roleOf(op);
            if (role != null && role.isInstance(algorithm))
            {
                final Entry previous = byOperation.getOrDefault(op, Map.of()).get(key);
                if (previous != null && previous.algorithm() != algorithm)
                {
                    throw new IllegalStateException("two algorithms named " + name + " for " + op.displayName());
                }
                ops.add(op);
            }
        }
        if (ops.isEmpty())
        {
            throw new IllegalArgumentException(name + " (" + algorithm.getClass().getName() + ") implements no " +
                "operation's algorithm interface");
        }
        spelling.putIfAbsent(key, name);
        for (final Operation op : ops)
        {
            byOperation.computeIfAbsent(op, o -> new LinkedHashMap<>()).put(key, new Entry(algorithm, auto));
        }
    }

    /**
     * The SPI interface of an operation's algorithms.
     *
     * @param op an operation.
     * @return such as {@link AllReduceAlgorithm}; null for an operation without algorithms (send, recv, split, init).
     */
    public static Class<? extends CollectiveAlgorithm> roleOf(final Operation op)
    {
        return switch (op)
        {
            case ALL_REDUCE -> AllReduceAlgorithm.class;
            case ALL_GATHER -> AllGatherAlgorithm.class;
            case REDUCE_SCATTER -> ReduceScatterAlgorithm.class;
            case BROADCAST -> BroadcastAlgorithm.class;
            case REDUCE -> ReduceAlgorithm.class;
            case ALL_TO_ALL -> AllToAllAlgorithm.class;
            case BARRIER -> BarrierAlgorithm.class;
            case ALL_GATHER_V -> AllGatherVAlgorithm.class;
            case REDUCE_SCATTER_V -> ReduceScatterVAlgorithm.class;
            case ALL_TO_ALL_V -> AllToAllVAlgorithm.class;
            case SCATTER -> ScatterAlgorithm.class;
            case GATHER -> GatherAlgorithm.class;
            default -> null;
        };
    }

    /**
     * The limits an algorithm is registered with for an operation.
     *
     * @param op   the operation.
     * @param name a name, in any case.
     * @return where the cost model may choose it; {@link AutoLimits#NONE} when the operation has no such name.
     */
    public AutoLimits autoLimits(final Operation op, final String name)
    {
        final Entry entry = byOperation.getOrDefault(op, Map.of()).get(key(name));
        return entry == null ? AutoLimits.NONE : entry.auto();
    }

    private static String key(final String name)
    {
        return name.toLowerCase(Locale.ROOT);
    }

    /**
     * Whether any operation has an algorithm of this name.
     *
     * @param name a name, in any case.
     * @return true when known.
     */
    public boolean knows(final String name)
    {
        return spelling.containsKey(key(name));
    }

    /**
     * Every name, as HCCL spells it, in registration order.
     *
     * @return the names.
     */
    public Set<String> names()
    {
        return Collections.unmodifiableSet(new LinkedHashSet<>(spelling.values()));
    }

    /**
     * The names of the algorithms of one operation.
     *
     * @param op the operation.
     * @return the names, as HCCL spells them; empty when the operation has none here.
     */
    public List<String> namesFor(final Operation op)
    {
        final List<String> names = new ArrayList<>();
        for (final String key : byOperation.getOrDefault(op, Map.of()).keySet())
        {
            names.add(spelling.get(key));
        }
        return names;
    }

    /**
     * Every algorithm of one operation.
     *
     * @param op the operation.
     * @return the algorithms, in the order of {@link #namesFor(Operation)}.
     */
    public List<CollectiveAlgorithm> algorithmsFor(final Operation op)
    {
        final List<CollectiveAlgorithm> algorithms = new ArrayList<>();
        byOperation.getOrDefault(op, Map.of()).values().forEach(e -> algorithms.add(e.algorithm()));
        return algorithms;
    }

    /**
     * The name an algorithm is registered under for an operation.
     *
     * @param op        the operation.
     * @param algorithm one of {@link #algorithmsFor(Operation)}.
     * @return the name as HCCL spells it, or null when the algorithm is not registered for {@code op}.
     */
    public String nameOf(final Operation op, final CollectiveAlgorithm algorithm)
    {
        for (final Map.Entry<String, Entry> e : byOperation.getOrDefault(op, Map.of()).entrySet())
        {
            if (e.getValue().algorithm() == algorithm)
            {
                return spelling.get(e.getKey());
            }
        }
        return null;
    }

    /**
     * The algorithm of this name for an operation.
     *
     * @param op   the operation.
     * @param name the name, in any case.
     * @param role the SPI interface of the operation, such as {@link AllReduceAlgorithm}.
     * @param <T>  that interface.
     * @return the algorithm, or null when {@code name} has none for {@code op}.
     */
    public <T> T find(final Operation op, final String name, final Class<T> role)
    {
        final Entry entry = byOperation.getOrDefault(op, Map.of()).get(key(name));
        return entry != null && role.isInstance(entry.algorithm()) ? role.cast(entry.algorithm()) : null;
    }

    /**
     * What {@code HCCL_ALGO}'s level form ({@code level0:NA;level1:NAME}) runs across nodes: the hierarchical schedule,
     * with {@code level1} between nodes for this operation (and the ring for its others), as HCCL composes the levels.
     *
     * @param op     the operation.
     * @param level1 one of {@link #algorithmsFor(Operation)}.
     * @return the composition; null when this catalog has no hierarchical algorithm for {@code op}, or {@code level1}
     *         is one (it runs as it is).
     */
    public CollectiveAlgorithm withLevel1(final Operation op, final CollectiveAlgorithm level1)
    {
        if (level1 instanceof HierarchicalAlgorithm)
        {
            return null;
        }
        for (final Entry entry : byOperation.getOrDefault(op, Map.of()).values())
        {
            if (entry.algorithm() instanceof HierarchicalAlgorithm)
            {
                return HierarchicalAlgorithm.withLevel1(op, level1);
            }
        }
        return null;
    }
}
