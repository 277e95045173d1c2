package dev.hccl.bench;

/**
 * One timed column group of a row: out-of-place or in-place.
 *
 * @param timeUs microseconds per operation, aggregated across ranks as {@code -a} says.
 * @param algBw  size / time, in GB/s (10^9 bytes per second).
 * @param busBw  {@code algBw} times the operation's bus-bandwidth factor, in GB/s.
 * @param wrong  wrong elements summed over ranks, or null when not checked ({@code -c 0}).
 * @param operations the operations timed ({@link TimedOperations}).
 */
public record Measurement(double timeUs, double algBw, double busBw, Long wrong, int operations)
{
}
