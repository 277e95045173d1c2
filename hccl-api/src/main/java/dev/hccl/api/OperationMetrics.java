package dev.hccl.api;

import java.util.List;

/**
 * One operation's counters on one rank of a communicator ({@link CommMetrics}), since the communicator was made.
 * Sizes are counted as nccl-tests' size column counts them: the buffer of an all-reduce, broadcast or reduce, the
 * whole output of an all-gather, the whole input of a reduce-scatter or all-to-all, the message of a send or receive
 * (0 for the V collectives, whose sizes differ between ranks). A time runs from when the operation started running on
 * this rank (not when it was issued) to its completion.
 *
 * @param operation       the operation.
 * @param count           calls completed, failed ones included.
 * @param failed          calls that failed.
 * @param bytes           bytes of the calls, summed.
 * @param totalNanos      their time, summed.
 * @param peerWaitNanos   the part of it spent waiting for other ranks (their data or signals), summed.
 * @param lastNanos       the time of the latest call.
 * @param lastBytes       the size of the latest call.
 * @param latencyBuckets  calls by time: bucket 0 under 1,024 ns, bucket {@code k} from {@code 2^(k+9)} ns to twice
 *                        that; the last one everything longer.
 * @param sizeClasses     the calls of each size class that has any, smallest first.
 * @param worldSize       the communicator's ranks, for {@link #lastBusBandwidth()}.
 */
public record OperationMetrics(Operation operation, long count, long failed, long bytes, long totalNanos,
    long peerWaitNanos, long lastNanos, long lastBytes, long[] latencyBuckets, List<SizeClassMetrics> sizeClasses,
    int worldSize)
{
    /** The latency histogram's buckets. */
    public static final int LATENCY_BUCKETS = 32;

    /**
     * @param operation      the operation.
     * @param count          calls completed.
     * @param failed         calls that failed.
     * @param bytes          bytes, summed.
     * @param totalNanos     time, summed.
     * @param peerWaitNanos  time waiting for other ranks, summed.
     * @param lastNanos      the latest call's time.
     * @param lastBytes      the latest call's size.
     * @param latencyBuckets calls by time, {@link #LATENCY_BUCKETS} of them; copied.
     * @param sizeClasses    the size classes with calls; copied.
     * @param worldSize      the communicator's ranks.
     */
    public OperationMetrics
    {
        latencyBuckets = latencyBuckets.clone();
        sizeClasses = List.copyOf(sizeClasses);
    }

    @Override
    public long[] latencyBuckets()
    {
        return latencyBuckets.clone();
    }

    /**
     * @return the mean time of a call, in nanoseconds; 0 without calls.
     */
    public double meanNanos()
    {
        return count == 0 ? 0 : totalNanos / (double)count;
    }

    /**
     * The time under which a fraction of the calls completed, from the histogram: the upper bound of the bucket
     * that holds that call, so at most twice the true figure.
     *
     * @param fraction from 0 to 1 (0.5 for the median, 0.99 for the 99th percentile).
     * @return nanoseconds; 0 without calls.
     */
    public long latencyAtMostNanos(final double fraction)
    {
        if (fraction < 0 || fraction > 1)
        {
            throw new IllegalArgumentException("fraction must be from 0 to 1, got " + fraction);
        }
        long total = 0;
        for (final long n : latencyBuckets)
        {
            total += n;
        }
        if (total == 0)
        {
            return 0;
        }
        final long rank = Math.max(1, (long)Math.ceil(fraction * total));
        long seen = 0;
        for (int k = 0; k < latencyBuckets.length; k++)
        {
            seen += latencyBuckets[k];
            if (seen >= rank)
            {
                return k == latencyBuckets.length - 1 ? Long.MAX_VALUE : 1L << (k + 10);
            }
        }
        return Long.MAX_VALUE;
    }

    /**
     * The bus bandwidth of the latest call, as nccl-tests computes it: its size over its time, times
     * {@code 2(n-1)/n} for an all-reduce, {@code (n-1)/n} for an all-gather, reduce-scatter or all-to-all, 1 for
     * the others.
     *
     * @return GB/s (10^9 bytes); 0 when the latest call took no measurable time or moved nothing.
     */
    public double lastBusBandwidth()
    {
        if (lastNanos <= 0 || lastBytes <= 0)
        {
            return 0;
        }
        final int n = worldSize;
        final double factor = switch (operation)
        {
            case ALL_REDUCE -> 2.0 * (n - 1) / n;
            case ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, ALL_GATHER_V, REDUCE_SCATTER_V, ALL_TO_ALL_V ->
                (n - 1) / (double)n;
            default -> 1.0;
        };
        return lastBytes / (double)lastNanos * factor;
    }
}
