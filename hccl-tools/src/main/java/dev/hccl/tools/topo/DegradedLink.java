package dev.hccl.tools.topo;

/**
 * A link whose measured bandwidth is well below the median of its class.
 *
 * @param from            the sending rank.
 * @param fromHost        its host name.
 * @param to              the receiving rank.
 * @param toHost          its host name.
 * @param linkClass       the link's class.
 * @param bandwidthGBps   its bandwidth, GB/s.
 * @param classMedianGBps the median bandwidth of its class, GB/s.
 */
public record DegradedLink(
    int from, String fromHost, int to, String toHost, LinkClass linkClass, double bandwidthGBps,
    double classMedianGBps)
{
}
