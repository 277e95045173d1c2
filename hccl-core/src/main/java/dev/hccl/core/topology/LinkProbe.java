package dev.hccl.core.topology;

import dev.hccl.algorithms.CostParameters;
import dev.hccl.algorithms.LinkCosts;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.PairMeasurement;
import dev.hccl.api.RankLayout;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Measures one link of each class at communicator creation ({@code HCCL_TOPO_PROBE}), for the cost model: the first
 * two ranks of the first node that has two (a local link), and the first ranks of nodes 0 and 1 (a network link).
 * <p>
 * One pair at a time, between barriers, so that each has the machine and the network to itself. The first rank of a
 * pair times {@link PairMeasurement round trips and transfers} and keeps the fastest of each: the model is of the
 * steady state, and the first calls of a fresh JVM are slow for reasons that pass (the JIT, a peer's core asleep);
 * all ranks then take the maximum of every rank's
 * figures, so that every rank holds the measuring ranks' figures and chooses algorithms alike. A class the layout
 * lacks, or a figure the clock cannot resolve, keeps its default; so does the reduction's speed, which is a property
 * of the kernel, not of the link.
 * <p>
 * The model's {@code alpha} is the measured one-way latency. Its {@code beta} comes from the transfer time, which is
 * one latency for the data, the data itself, and one latency for the acknowledgement:
 * {@code beta = (t - 2 alpha) / bytes}.
 */
public final class LinkProbe
{
    /** Bytes of each timed transfer: large enough to be dominated by bandwidth on a 10 Gbit/s network. */
    public static final int TRANSFER_BYTES = 1 << 20;
    /** Timed round trips per pair. */
    public static final int LATENCY_ROUND_TRIPS = 50;
    /** Timed transfers per pair. */
    public static final int TRANSFERS = 3;

    private static final int LOCAL_ALPHA = 0;
    private static final int LOCAL_BETA = 1;
    private static final int NETWORK_ALPHA = 2;
    private static final int NETWORK_BETA = 3;

    private LinkProbe()
    {
    }

    /**
     * Measures; every rank of the communicator calls it, before any other operation.
     *
     * @param comm     the communicator.
     * @param defaults the parameters of a class that is not measured, and the reduction's.
     * @return the parameters, the same on every rank.
     */
    public static LinkCosts measure(final Communicator comm, final LinkCosts defaults)
    {
        final RankLayout layout = comm.topology().layout();
        final double[] mine = new double[4];
        final PairMeasurement pair = new PairMeasurement(comm, TRANSFER_BYTES);
        for (int node = 0; node < layout.nodeCount(); node++)
        {
            if (layout.sizeOf(node) >= 2)
            {
                final int[] ranks = layout.ranksOn(node);
                measure(comm, pair, ranks[0], ranks[1], mine, LOCAL_ALPHA);
                break;
            }
        }
        if (layout.nodeCount() >= 2)
        {
            final int[] leaders = layout.leaders(0);
            measure(comm, pair, leaders[0], leaders[1], mine, NETWORK_ALPHA);
        }
        final ByteBuffer figures = ByteBuffer.allocateDirect(Double.BYTES * mine.length).order(ByteOrder.nativeOrder());
        figures.asDoubleBuffer().put(mine);
        comm.allReduce(figures, figures, mine.length, DataType.FP64, ReduceOp.MAX);
        final double[] all = new double[mine.length];
        figures.asDoubleBuffer().get(all);
        return new LinkCosts(
            measured(all[LOCAL_ALPHA], all[LOCAL_BETA], defaults.local()),
            measured(all[NETWORK_ALPHA], all[NETWORK_BETA], defaults.network()),
            "measured");
    }

    /** The pair (a, b) measures a's link to b into figures[at], figures[at + 1]; the other ranks wait. */
    private static void measure(
        final Communicator comm, final PairMeasurement pair, final int a, final int b, final double[] figures,
        final int at)
    {
        comm.barrier();
        if (comm.rank() == a)
        {
            final double alpha = min(pair.roundTripSeconds(b, LATENCY_ROUND_TRIPS)) / 2;
            final double transfer = min(pair.transferSeconds(b, TRANSFERS));
            figures[at] = alpha;
            figures[at + 1] = (transfer - 2 * alpha) / pair.bytes();
        }
        else if (comm.rank() == b)
        {
            pair.answer(a, LATENCY_ROUND_TRIPS, TRANSFERS);
        }
    }

    private static double min(final double[] values)
    {
        double min = Double.POSITIVE_INFINITY;
        for (final double v : values)
        {
            min = Math.min(min, v);
        }
        return min;
    }

    private static CostParameters measured(final double alpha, final double beta, final CostParameters dflt)
    {
        return alpha > 0 && beta > 0 ? new CostParameters(alpha, beta, dflt.gamma()) : dflt;
    }
}
