package dev.hccl.api;

/**
 * One operation's completed calls of one size class: sizes from {@code minBytes} up to {@code maxBytes}, a power of
 * two apart (the first class holds 0 and 1 byte).
 *
 * @param minBytes   the smallest size of the class.
 * @param maxBytes   the largest size of the class.
 * @param count      the calls completed.
 * @param totalNanos their time, summed.
 */
public record SizeClassMetrics(long minBytes, long maxBytes, long count, long totalNanos)
{
    /**
     * @return the mean time of a call, in nanoseconds; 0 without calls.
     */
    public double meanNanos()
    {
        return count == 0 ? 0 : totalNanos / (double)count;
    }
}
