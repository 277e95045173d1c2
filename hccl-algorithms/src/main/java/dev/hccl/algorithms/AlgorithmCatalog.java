package dev.hccl.algorithms;

import dev.hccl.api.Operation;
import dev.hccl.api.spi.AllGatherAlgorithm;
import dev.hccl.api.spi.AllGatherVAlgorithm;
import dev.hccl.api.spi.AllReduceAlgorithm;
import dev.hccl.api.spi.AllToAllAlgorithm;
import dev.hccl.api.spi.AllToAllVAlgorithm;
import dev.hccl.api.spi.BarrierAlgorithm;
import dev.hccl.api.spi.BroadcastAlgorithm;
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
import java.util.Set;

/**
 * Every algorithm of this module, by operation and by the name {@code HCCL_ALGO} gives it. One name may stand for a
 * family with one member per operation ({@code ring}: the ring for all-reduce, all-gather and reduce-scatter, and
 * scatter + ring all-gather for broadcast); names match whatever their case.
 */
public final class AlgorithmCatalog
{
    /** The name that asks for the automatic choice, as HCCL spells it. */
    public static final String AUTOMATIC = "NA";

    private final Map<Operation, Map<String, Object>> byOperation = new EnumMap<>(Operation.class);
    private final Map<String, String> spelling = new LinkedHashMap<>();

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
        catalog.add(RingAlgorithm.NAME, new RingAlgorithm());
        catalog.add(FullMeshAlgorithm.NAME, new FullMeshAlgorithm());
        catalog.add(BinomialTreeAlgorithm.NAME, new BinomialTreeAlgorithm());
        catalog.add(DoubleBinaryTreeAlgorithm.NAME, new DoubleBinaryTreeAlgorithm());
        catalog.add(HalvingDoublingAlgorithm.NAME, new HalvingDoublingAlgorithm());
        catalog.add(HierarchicalAlgorithm.NAME, HierarchicalAlgorithm.overRing());
        catalog.add(BruckAllGatherAlgorithm.NAME, new BruckAllGatherAlgorithm());
        catalog.add(PairwiseAllToAllAlgorithm.NAME, new PairwiseAllToAllAlgorithm());
        catalog.add(DisseminationBarrierAlgorithm.NAME, new DisseminationBarrierAlgorithm());
        // The V collectives, scatter and gather, each under the name of the family whose schedule it follows.
        catalog.add(RingVAlgorithm.NAME, new RingVAlgorithm());
        catalog.add(PairwiseAllToAllVAlgorithm.NAME, new PairwiseAllToAllVAlgorithm());
        catalog.add(BinomialScatterGatherAlgorithm.NAME, new BinomialScatterGatherAlgorithm());
        return catalog;
    }

    private void add(final String name, final Object algorithm)
    {
        final String key = key(name);
        spelling.putIfAbsent(key, name);
        register(Operation.ALL_REDUCE, AllReduceAlgorithm.class, key, algorithm);
        register(Operation.ALL_GATHER, AllGatherAlgorithm.class, key, algorithm);
        register(Operation.REDUCE_SCATTER, ReduceScatterAlgorithm.class, key, algorithm);
        register(Operation.BROADCAST, BroadcastAlgorithm.class, key, algorithm);
        register(Operation.REDUCE, ReduceAlgorithm.class, key, algorithm);
        register(Operation.ALL_TO_ALL, AllToAllAlgorithm.class, key, algorithm);
        register(Operation.BARRIER, BarrierAlgorithm.class, key, algorithm);
        register(Operation.ALL_GATHER_V, AllGatherVAlgorithm.class, key, algorithm);
        register(Operation.REDUCE_SCATTER_V, ReduceScatterVAlgorithm.class, key, algorithm);
        register(Operation.ALL_TO_ALL_V, AllToAllVAlgorithm.class, key, algorithm);
        register(Operation.SCATTER, ScatterAlgorithm.class, key, algorithm);
        register(Operation.GATHER, GatherAlgorithm.class, key, algorithm);
    }

    private void register(final Operation op, final Class<?> role, final String key, final Object algorithm)
    {
        if (role.isInstance(algorithm))
        {
            final Object previous = byOperation.computeIfAbsent(op, o -> new LinkedHashMap<>()).put(key, algorithm);
            if (previous != null && previous != algorithm)
            {
                throw new IllegalStateException("two algorithms named " + key + " for " + op.displayName());
            }
        }
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
    public List<Object> algorithmsFor(final Operation op)
    {
        return new ArrayList<>(byOperation.getOrDefault(op, Map.of()).values());
    }

    /**
     * The name an algorithm is registered under for an operation.
     *
     * @param op        the operation.
     * @param algorithm one of {@link #algorithmsFor(Operation)}.
     * @return the name as HCCL spells it, or null when the algorithm is not registered for {@code op}.
     */
    public String nameOf(final Operation op, final Object algorithm)
    {
        for (final Map.Entry<String, Object> e : byOperation.getOrDefault(op, Map.of()).entrySet())
        {
            if (e.getValue() == algorithm)
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
        final Object algorithm = byOperation.getOrDefault(op, Map.of()).get(key(name));
        return role.isInstance(algorithm) ? role.cast(algorithm) : null;
    }
}
