package dev.hccl.tools.topo;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;

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
    /** Bytes of a latency message and of an acknowledgement. */
    static final int SMALL_BYTES = 8;

    /** Untimed round trips before a pair's latency is timed, so that the JIT has compiled the path. */
    private static final int LATENCY_WARMUP = 10;

    /** Untimed transfers before a pair's bandwidth is timed. */
    private static final int BANDWIDTH_WARMUP = 1;

    private static final double NANOS_PER_MICRO = 1_000.0;

    private final Communicator comm;
    private final int bytes;
    private final int latencyIters;
    private final int bandwidthIters;
    private final ByteBuffer small = ByteBuffer.allocateDirect(SMALL_BYTES).order(ByteOrder.nativeOrder());
    private final ByteBuffer large;

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
        this.large = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
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
        for (int i = 0; i < LATENCY_WARMUP; i++)
        {
            roundTrip(peer);
        }
        final double[] nanos = new double[latencyIters];
        for (int i = 0; i < latencyIters; i++)
        {
            final long start = System.nanoTime();
            roundTrip(peer);
            nanos[i] = System.nanoTime() - start;
        }
        return DegradedLinks.median(nanos) / 2 / NANOS_PER_MICRO;
    }

    private double bandwidthGBps(final int peer)
    {
        for (int i = 0; i < BANDWIDTH_WARMUP; i++)
        {
            transfer(peer);
        }
        final double[] nanos = new double[bandwidthIters];
        for (int i = 0; i < bandwidthIters; i++)
        {
            final long start = System.nanoTime();
            transfer(peer);
            nanos[i] = System.nanoTime() - start;
        }
        // Bytes per nanosecond are GB/s; a clock too coarse to see the transfer is held to one nanosecond.
        return bytes / Math.max(DegradedLinks.median(nanos), 1.0);
    }

    private void roundTrip(final int peer)
    {
        comm.send(small, SMALL_BYTES, DataType.INT8, peer);
        comm.recv(small, SMALL_BYTES, DataType.INT8, peer);
    }

    private void transfer(final int peer)
    {
        comm.send(large, bytes, DataType.INT8, peer);
        comm.recv(small, SMALL_BYTES, DataType.INT8, peer);
    }

    /**
     * The receiving side of one pair: echoes the round trips, acknowledges the transfers.
     */
    private void answer(final int peer)
    {
        for (int i = 0; i < LATENCY_WARMUP + latencyIters; i++)
        {
            comm.recv(small, SMALL_BYTES, DataType.INT8, peer);
            comm.send(small, SMALL_BYTES, DataType.INT8, peer);
        }
        for (int i = 0; i < BANDWIDTH_WARMUP + bandwidthIters; i++)
        {
            comm.recv(large, bytes, DataType.INT8, peer);
            comm.send(small, SMALL_BYTES, DataType.INT8, peer);
        }
    }
}
