package dev.hccl.core;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.algorithms.BinomialScatterGatherAlgorithm;
import dev.hccl.algorithms.BinomialTreeAlgorithm;
import dev.hccl.algorithms.BruckAllGatherAlgorithm;
import dev.hccl.algorithms.CostParameters;
import dev.hccl.algorithms.CostedAlgorithm;
import dev.hccl.algorithms.DisseminationBarrierAlgorithm;
import dev.hccl.algorithms.FullMeshAlgorithm;
import dev.hccl.algorithms.HalvingDoublingAlgorithm;
import dev.hccl.algorithms.HierarchicalAlgorithm;
import dev.hccl.algorithms.PairwiseAllToAllAlgorithm;
import dev.hccl.algorithms.PairwiseAllToAllVAlgorithm;
import dev.hccl.algorithms.RingAlgorithm;
import dev.hccl.algorithms.RingVAlgorithm;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which algorithm runs an operation of a given size: the one {@code HCCL_ALGO} forces, else the automatic choice by
 * size, with the thresholds measured on loopback TCP that {@code docs/ALGORITHMS.md} records.
 * <p>
 * <b>Determinism.</b> Every algorithm of the catalog reduces each element in an order fixed by the ranks alone,
 * never by the order in which messages arrive, and distributes one result, so all ranks hold the same bits and a
 * repetition gives them again. The automatic choice depends only on the operation, the size and the world size, so
 * the same call always takes the same algorithm. {@code HCCL_DETERMINISTIC=true} is therefore what this class does
 * today; it is recorded here so that a choice informed by measured link speeds (the topology issue's cost model),
 * which could differ between runs, is never made under it.
 */
final class AlgorithmSelector
{
    /** The algorithms, shared: they hold no state of their own. */
    static final AlgorithmCatalog CATALOG = AlgorithmCatalog.standard();

    /** All-reduce up to this many bytes takes the one-shot exchange: one latency instead of the ring's 2(n-1). */
    static final int FULL_MESH_MAX_BYTES = 4 * 1024;
    /**
     * With a power-of-two world size of 4 or more, all-reduce, all-gather and reduce-scatter up to this many bytes
     * take halving-doubling: {@code log2 n} steps instead of the ring's {@code n-1}, the same bytes on the wire.
     * Measured at np = 4: 0.6x the ring's time at 256 KiB to 2 MiB, even at 16 MiB.
     */
    static final long HALVING_DOUBLING_MAX_BYTES = 8L << 20;
    /** Other world sizes' all-gather up to this many bytes takes Bruck's {@code ceil(log2 n)} steps, then the ring. */
    static final long BRUCK_MAX_BYTES = 256 * 1024;
    /**
     * Broadcast below this many bytes takes the binomial tree ({@code log2 n} hops of the whole message), from it on
     * scatter + ring all-gather (each byte crosses a link about twice, whatever n); at two ranks always the tree,
     * which then sends once. The model puts the crossover at {@code 6 alpha / beta}, about 72 KB at n = 4.
     */
    static final long TREE_BROADCAST_MAX_BYTES = 64 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(AlgorithmSelector.class);

    private final AlgoOverride override;
    private final boolean multiNode;
    private final boolean deterministic;
    /** The (operation, size bucket) pairs whose automatic choice DEBUG has explained. */
    private final java.util.Set<Long> explained = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * @param override      what the user forces.
     * @param multiNode     whether the communicator spans more than one node: then level1 of the override decides.
     * @param deterministic {@code HCCL_DETERMINISTIC}: never let a measurement sway the choice.
     */
    AlgorithmSelector(final AlgoOverride override, final boolean multiNode, final boolean deterministic)
    {
        this.override = override;
        this.multiNode = multiNode;
        this.deterministic = deterministic;
    }

    AllReduceAlgorithm allReduce(final int worldSize, final long bytes)
    {
        final AllReduceAlgorithm forced = forced(Operation.ALL_REDUCE, AllReduceAlgorithm.class);
        if (forced != null && (!(forced instanceof FullMeshAlgorithm) || FullMeshAlgorithm.fits(worldSize, bytes)))
        {
            return forced;
        }
        if (forced != null)
        {
            LOG.warn("HCCL_ALGO forces {} for an all-reduce of {} bytes over {} ranks, more than its scratch of n " +
                "inputs can hold; taking the automatic choice", FullMeshAlgorithm.NAME, bytes, worldSize);
        }
        // Across nodes, anything beyond the one-shot sizes goes through the nodes' local links first, so that the
        // links between nodes carry each byte once per node rather than once per rank.
        final String name = bytes <= FULL_MESH_MAX_BYTES ? FullMeshAlgorithm.NAME :
            multiNode ? HierarchicalAlgorithm.NAME :
            halvingDoublingPays(worldSize, bytes) ? HalvingDoublingAlgorithm.NAME : RingAlgorithm.NAME;
        return automatic(Operation.ALL_REDUCE, name, AllReduceAlgorithm.class, worldSize, bytes);
    }

    AllGatherAlgorithm allGather(final int worldSize, final long bytes)
    {
        final AllGatherAlgorithm forced = forced(Operation.ALL_GATHER, AllGatherAlgorithm.class);
        if (forced != null)
        {
            return forced;
        }
        final String name = halvingDoublingPays(worldSize, bytes) ? HalvingDoublingAlgorithm.NAME :
            bytes <= BRUCK_MAX_BYTES ? BruckAllGatherAlgorithm.NAME : RingAlgorithm.NAME;
        return automatic(Operation.ALL_GATHER, name, AllGatherAlgorithm.class, worldSize, bytes);
    }

    ReduceScatterAlgorithm reduceScatter(final int worldSize, final long bytes)
    {
        final ReduceScatterAlgorithm forced = forced(Operation.REDUCE_SCATTER, ReduceScatterAlgorithm.class);
        if (forced != null)
        {
            return forced;
        }
        final String name = halvingDoublingPays(worldSize, bytes) ? HalvingDoublingAlgorithm.NAME : RingAlgorithm.NAME;
        return automatic(Operation.REDUCE_SCATTER, name, ReduceScatterAlgorithm.class, worldSize, bytes);
    }

    BroadcastAlgorithm broadcast(final int worldSize, final long bytes)
    {
        final BroadcastAlgorithm forced = forced(Operation.BROADCAST, BroadcastAlgorithm.class);
        if (forced != null)
        {
            return forced;
        }
        final String name = worldSize <= 2 || bytes < TREE_BROADCAST_MAX_BYTES ? BinomialTreeAlgorithm.NAME :
            RingAlgorithm.NAME;
        return automatic(Operation.BROADCAST, name, BroadcastAlgorithm.class, worldSize, bytes);
    }

    /** Halving-doubling's fold doubles the traffic of the ranks beyond a power of two; at two ranks it is the ring. */
    private static boolean halvingDoublingPays(final int worldSize, final long bytes)
    {
        return worldSize >= 4 && Integer.bitCount(worldSize) == 1 && bytes <= HALVING_DOUBLING_MAX_BYTES;
    }

    ReduceAlgorithm reduce(final int worldSize, final long bytes)
    {
        final ReduceAlgorithm forced = forced(Operation.REDUCE, ReduceAlgorithm.class);
        return forced != null ? forced :
            automatic(Operation.REDUCE, BinomialTreeAlgorithm.NAME, ReduceAlgorithm.class, worldSize, bytes);
    }

    AllToAllAlgorithm allToAll(final int worldSize, final long bytes)
    {
        final AllToAllAlgorithm forced = forced(Operation.ALL_TO_ALL, AllToAllAlgorithm.class);
        return forced != null ? forced :
            automatic(Operation.ALL_TO_ALL, PairwiseAllToAllAlgorithm.NAME, AllToAllAlgorithm.class, worldSize, bytes);
    }

    BarrierAlgorithm barrier(final int worldSize)
    {
        final BarrierAlgorithm forced = forced(Operation.BARRIER, BarrierAlgorithm.class);
        return forced != null ? forced :
            automatic(Operation.BARRIER, DisseminationBarrierAlgorithm.NAME, BarrierAlgorithm.class, worldSize, 0);
    }

    // The V collectives, scatter and gather have one algorithm each so far: HCCL_ALGO can name it, nothing to choose.

    AllGatherVAlgorithm allGatherV(final int worldSize, final long bytes)
    {
        final AllGatherVAlgorithm forced = forced(Operation.ALL_GATHER_V, AllGatherVAlgorithm.class);
        return forced != null ? forced : automatic(Operation.ALL_GATHER_V, RingVAlgorithm.NAME,
            AllGatherVAlgorithm.class, worldSize, bytes);
    }

    ReduceScatterVAlgorithm reduceScatterV(final int worldSize, final long bytes)
    {
        final ReduceScatterVAlgorithm forced = forced(Operation.REDUCE_SCATTER_V, ReduceScatterVAlgorithm.class);
        return forced != null ? forced : automatic(Operation.REDUCE_SCATTER_V, RingVAlgorithm.NAME,
            ReduceScatterVAlgorithm.class, worldSize, bytes);
    }

    AllToAllVAlgorithm allToAllV(final int worldSize, final long bytes)
    {
        final AllToAllVAlgorithm forced = forced(Operation.ALL_TO_ALL_V, AllToAllVAlgorithm.class);
        return forced != null ? forced : automatic(Operation.ALL_TO_ALL_V, PairwiseAllToAllVAlgorithm.NAME,
            AllToAllVAlgorithm.class, worldSize, bytes);
    }

    ScatterAlgorithm scatter(final int worldSize, final long bytes)
    {
        final ScatterAlgorithm forced = forced(Operation.SCATTER, ScatterAlgorithm.class);
        return forced != null ? forced : automatic(Operation.SCATTER, BinomialScatterGatherAlgorithm.NAME,
            ScatterAlgorithm.class, worldSize, bytes);
    }

    GatherAlgorithm gather(final int worldSize, final long bytes)
    {
        final GatherAlgorithm forced = forced(Operation.GATHER, GatherAlgorithm.class);
        return forced != null ? forced : automatic(Operation.GATHER, BinomialScatterGatherAlgorithm.NAME,
            GatherAlgorithm.class, worldSize, bytes);
    }

    @Override
    public String toString()
    {
        return "algorithms " + override +
            (multiNode ? " (level1 decides: several nodes)" : " (level0 decides: one node)") +
            (deterministic ? ", deterministic" : "");
    }

    private <T> T forced(final Operation op, final Class<T> role)
    {
        final String name = override.forced(op, multiNode, CATALOG);
        if (name == null)
        {
            return null;
        }
        final T algorithm = CATALOG.find(op, name, role);
        if (algorithm == null)
        {
            // AlgoOverride.parse accepted the name for this operation, so the catalog has it.
            throw new IllegalStateException("HCCL_ALGO names " + name + " for " + op.displayName() + ", not found");
        }
        if (LOG.isDebugEnabled())
        {
            LOG.debug("{}: {}, forced by HCCL_ALGO", op.displayName(), name);
        }
        return algorithm;
    }

    private <T> T automatic(
        final Operation op, final String name, final Class<T> role, final int worldSize, final long bytes)
    {
        final T algorithm = CATALOG.find(op, name, role);
        // Once per operation and power-of-two size, so that DEBUG tells why without a line per call.
        if (LOG.isDebugEnabled() && explained.add(op.ordinal() * 64L + (63 - Long.numberOfLeadingZeros(bytes))))
        {
            LOG.debug("{} of {} bytes over {} ranks: {}, by the size thresholds; {}", op.displayName(), bytes,
                worldSize, name, explain(op, worldSize, bytes));
        }
        return algorithm;
    }

    /**
     * What each algorithm of an operation would cost by its alpha-beta-gamma formula with the loopback parameters,
     * for the DEBUG account of a choice: {@code "predicted: ring 123.4 us, H-D_R 98.7 us"}.
     */
    static String explain(final Operation op, final int worldSize, final long bytes)
    {
        final StringBuilder sb = new StringBuilder("predicted with ").append(CostParameters.LOOPBACK_TCP).append(':');
        String separator = " ";
        for (final Object algorithm : CATALOG.algorithmsFor(op))
        {
            if (algorithm instanceof CostedAlgorithm)
            {
                final double seconds = ((CostedAlgorithm)algorithm).predictSeconds(op, Math.max(1, worldSize),
                    Math.max(0, bytes), CostParameters.LOOPBACK_TCP);
                sb.append(separator).append(CATALOG.nameOf(op, algorithm))
                    .append(String.format(java.util.Locale.ROOT, " %.1f us", seconds * 1e6));
                separator = ", ";
            }
        }
        return sb.toString();
    }
}
