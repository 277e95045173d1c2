package dev.hccl.algorithms;

/**
 * The alpha-beta-gamma model of one class of link (Hockney's, with Thakur and Gropp's reduction term): a message of
 * {@code m} bytes costs {@code alpha + m * beta} to send, and reducing {@code m} bytes costs {@code m * gamma}.
 *
 * @param alpha seconds of latency per message.
 * @param beta  seconds per byte on the wire (1 / bandwidth).
 * @param gamma seconds per byte reduced (1 / reduction bandwidth).
 */
public record CostParameters(double alpha, double beta, double gamma)
{
    /**
     * Loopback TCP and the reduction kernel on the 2-vCPU VM where the thresholds of {@code docs/ALGORITHMS.md}
     * were measured: about 10 µs per message, 1.2 GB/s per link, 3 GB/s reduction.
     */
    public static final CostParameters LOOPBACK_TCP = new CostParameters(10e-6, 1 / 1.2e9, 1 / 3e9);

    /**
     * Shared memory between two processes on the same VM ({@code hccl-transport-shm}): a message is copied into the
     * pair's ring and out of it (or reduced out of it) by the receiver, with no system call; about 3 µs per message
     * and 2.4 GB/s per link, the reduction as for {@link #LOOPBACK_TCP}. {@code docs/PERFORMANCE.md} has the
     * measurements.
     */
    public static final CostParameters VM_SHARED_MEMORY = new CostParameters(3e-6, 1 / 2.4e9, 1 / 3e9);

    /**
     * Validates.
     *
     * @param alpha seconds per message, not negative.
     * @param beta  seconds per byte, not negative.
     * @param gamma seconds per byte reduced, not negative.
     */
    public CostParameters
    {
        if (!(alpha >= 0 && beta >= 0 && gamma >= 0) || !Double.isFinite(alpha + beta + gamma))
        {
            throw new IllegalArgumentException(
                "alpha, beta and gamma must be finite and not negative, got " + alpha + ", " + beta + ", " + gamma);
        }
    }

    /**
     * The parameters of this link when {@code flows} transfers share it at once, each at {@code 1/flows} of its
     * bandwidth: the ranks of one node sending through the node's one network link.
     *
     * @param flows transfers at once, at least 1.
     * @return the parameters each transfer sees.
     */
    public CostParameters sharedBy(final int flows)
    {
        if (flows < 1)
        {
            throw new IllegalArgumentException("flows must be at least 1, got " + flows);
        }
        return flows == 1 ? this : new CostParameters(alpha, beta * flows, gamma);
    }

    /**
     * For logs: {@code "10.0 us per message, 1.20 GB/s, reduction 3.00 GB/s"}.
     *
     * @return the parameters in the units people quote.
     */
    @Override
    public String toString()
    {
        return String.format(java.util.Locale.ROOT, "%.1f us per message, %.2f GB/s, reduction %.2f GB/s",
            alpha * 1e6, beta > 0 ? 1e-9 / beta : Double.POSITIVE_INFINITY,
            gamma > 0 ? 1e-9 / gamma : Double.POSITIVE_INFINITY);
    }
}
