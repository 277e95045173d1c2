package dev.hccl.api;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * One pair of ranks timing the link between them, as the OSU and Open MPI ping-pong tests do: the measuring rank
 * calls {@link #roundTripSeconds} and {@link #transferSeconds}, its peer {@link #answer} with the same counts.
 * <p>
 * Round trips of 8 bytes, after untimed ones that let the JIT compile the path; transfers each timed by the sender
 * from the start of its send to the arrival of an 8-byte acknowledgement, so that the time covers the whole
 * transfer. The caller makes latency and bandwidth of the samples: a median for a report, a minimum for a model of
 * the steady state. The library's link probe ({@code HCCL_TOPO_PROBE}) and {@code hccl-topo} both time links with it;
 * it uses nothing but the communicator's send and receive.
 */
public final class PairMeasurement
{
    /** Bytes of a latency message and of an acknowledgement. */
    public static final int SMALL_BYTES = 8;
    /** Untimed round trips before the latency is timed. */
    public static final int LATENCY_WARMUP = 10;
    /** Untimed transfers before the bandwidth is timed. */
    public static final int BANDWIDTH_WARMUP = 1;

    private final Communicator comm;
    private final int bytes;
    private final ByteBuffer small = ByteBuffer.allocateDirect(SMALL_BYTES).order(ByteOrder.nativeOrder());
    private final ByteBuffer large;

    /**
     * @param comm  the communicator both ranks of the pair belong to.
     * @param bytes bytes per bandwidth transfer, at least 1.
     */
    public PairMeasurement(final Communicator comm, final int bytes)
    {
        if (bytes < 1)
        {
            throw new IllegalArgumentException("bytes must be at least 1, got " + bytes);
        }
        this.comm = comm;
        this.bytes = bytes;
        this.large = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    }

    /**
     * @return bytes per bandwidth transfer.
     */
    public int bytes()
    {
        return bytes;
    }

    /**
     * Times round trips to a peer that {@link #answer}s, after {@link #LATENCY_WARMUP} untimed ones.
     *
     * @param peer  the other rank of the pair.
     * @param iters timed round trips, at least 1.
     * @return each round trip's time, in seconds, in order.
     */
    public double[] roundTripSeconds(final int peer, final int iters)
    {
        for (int i = 0; i < LATENCY_WARMUP; i++)
        {
            roundTrip(peer);
        }
        final double[] seconds = new double[iters];
        for (int i = 0; i < iters; i++)
        {
            final long start = System.nanoTime();
            roundTrip(peer);
            seconds[i] = (System.nanoTime() - start) / 1e9;
        }
        return seconds;
    }

    /**
     * Times transfers of {@link #bytes()} to a peer that {@link #answer}s, each until its acknowledgement has come
     * back, after {@link #BANDWIDTH_WARMUP} untimed ones.
     *
     * @param peer  the other rank of the pair.
     * @param iters timed transfers, at least 1.
     * @return each transfer's time, in seconds, in order; at least a nanosecond, however coarse the clock.
     */
    public double[] transferSeconds(final int peer, final int iters)
    {
        for (int i = 0; i < BANDWIDTH_WARMUP; i++)
        {
            transfer(peer);
        }
        final double[] seconds = new double[iters];
        for (int i = 0; i < iters; i++)
        {
            final long start = System.nanoTime();
            transfer(peer);
            seconds[i] = Math.max(System.nanoTime() - start, 1) / 1e9;
        }
        return seconds;
    }

    /**
     * The other side of a measurement: echoes the round trips, acknowledges the transfers.
     *
     * @param peer           the measuring rank.
     * @param latencyIters   its timed round trips.
     * @param bandwidthIters its timed transfers.
     */
    public void answer(final int peer, final int latencyIters, final int bandwidthIters)
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

    /**
     * The median; the mean of the middle two for an even count.
     *
     * @param values at least one; left as they are.
     * @return the median.
     */
    public static double median(final double[] values)
    {
        if (values.length == 0)
        {
            throw new IllegalArgumentException("median of no values");
        }
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
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
}
