package dev.hccl.tools.topo;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.PairMeasurement;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Measures every ordered pair of ranks, one pair at a time in a fixed order (by sending rank, then receiving rank),
 * after an untimed pass around the ring that warms up every rank's sending and answering paths.
 * Every rank takes part in every step: a barrier opens each step, so that the ranks not in the pair sit idle while it
 * is measured instead of loading the machine with another pair's traffic.
 * <p>
 * Latency: half the median of N 8-byte round trips started by the sender (as the OSU and Open MPI ping-pong tests
 * report it). Bandwidth: the bytes over the median time of M transfers, each timed by the sender from the start of its
 * send to the arrival of an 8-byte acknowledgement, so that the time covers the whole transfer.
 */
public final class PairProbe
{
    private final Communicator comm;
    private final int bytes;
    private final int latencyIters;
    private final int bandwidthIters;
    private final PairMeasurement pair;

    /**
     * A probe over a communicator.
     *
     * @param comm           the communicator; every rank runs {@link #run()} with the same settings.
     * @param bytes          bytes per bandwidth transfer, at least 1.
     * @param latencyIters   timed round trips per pair, at least 1.
     * @param bandwidthIters timed transfers per pair, at least 1.
     */
    public PairProbe(final Communicator comm, final int bytes, final int latencyIters, final int bandwidthIters)
    {
        this.comm = comm;
        this.bytes = bytes;
        this.latencyIters = latencyIters;
        this.bandwidthIters = bandwidthIters;
        this.pair = new PairMeasurement(comm, bytes);
    }

    /**
     * Measures every pair; every rank of the communicator must call it.
     *
     * @return every pair's latency and bandwidth, the same on every rank.
     */
    public Probe run()
    {
        final int ranks = comm.worldSize();
        final int me = comm.rank();
        // This rank's row (the pairs it sends in): latencies, then bandwidths.
        final double[] mine = new double[2 * ranks];
        // An untimed pass around the ring first: every rank sends and answers once before any pair is timed, so that
        // the first pairs are not measured with the JIT still compiling (they read several times slower otherwise, and
        // the slowest looked degraded).
        for (int from = 0; ranks > 1 && from < ranks; from++)
        {
            final int to = (from + 1) % ranks;
            comm.barrier();
            if (me == from)
            {
                latencyUs(to);
                bandwidthGBps(to);
            }
            else if (me == to)
            {
                answer(from);
            }
        }
        for (int from = 0; from < ranks; from++)
        {
            for (int to = 0; to < ranks; to++)
            {
                if (from == to)
                {
                    continue;
                }
                comm.barrier();
                if (me == from)
                {
                    mine[to] = latencyUs(to);
                    mine[ranks + to] = bandwidthGBps(to);
                }
                else if (me == to)
                {
                    answer(from);
                }
            }
        }
        final ByteBuffer row = ByteBuffer.allocateDirect(Double.BYTES * 2 * ranks).order(ByteOrder.nativeOrder());
        row.asDoubleBuffer().put(mine);
        final ByteBuffer all = ByteBuffer.allocateDirect(Double.BYTES * 2 * ranks * ranks)
            .order(ByteOrder.nativeOrder());
        comm.allGather(row, all, 2L * ranks, DataType.FP64);
        final double[][] latency = new double[ranks][ranks];
        final double[][] bandwidth = new double[ranks][ranks];
        for (int from = 0; from < ranks; from++)
        {
            for (int to = 0; to < ranks; to++)
            {
                latency[from][to] = all.getDouble(Double.BYTES * (2 * ranks * from + to));
                bandwidth[from][to] = all.getDouble(Double.BYTES * (2 * ranks * from + ranks + to));
            }
        }
        return new Probe(bytes, latencyIters, bandwidthIters, Probe.matrix(latency), Probe.matrix(bandwidth));
    }

    private double latencyUs(final int peer)
    {
        return PairMeasurement.median(pair.roundTripSeconds(peer, latencyIters)) / 2 * 1e6;
    }

    private double bandwidthGBps(final int peer)
    {
        return bytes / PairMeasurement.median(pair.transferSeconds(peer, bandwidthIters)) / 1e9;
    }

    /**
     * The receiving side of one pair: echoes the round trips, acknowledges the transfers.
     */
    private void answer(final int peer)
    {
        pair.answer(peer, latencyIters, bandwidthIters);
    }

}
