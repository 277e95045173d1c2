package dev.hccl.core.jmx;

import java.util.Map;

/**
 * One rank of a communicator, as JMX shows it: the figures of {@link dev.hccl.api.CommMetrics}, read when asked.
 * Maps are keyed by operation as the API names it ({@code allReduce}); those by size class by operation and the class's
 * sizes ({@code allReduce 1024-2047 B}).
 */
public interface CommunicatorMXBean
{
    /** @return the communicator's id in hexadecimal. */
    String getCommunicatorId();

    /** @return this rank. */
    int getRank();

    /** @return the communicator's ranks. */
    int getWorldSize();

    /** @return calls completed, every operation. */
    long getCalls();

    /** @return calls that failed. */
    long getFailedCalls();

    /** @return bytes of every call, as nccl-tests counts sizes. */
    long getBytes();

    /** @return waits reported as stalled. */
    long getStalls();

    /** @return the communicator's failure, or an empty string while it works. */
    String getFailure();

    /** @return calls per operation. */
    Map<String, Long> getCallsByOperation();

    /** @return bytes per operation. */
    Map<String, Long> getBytesByOperation();

    /** @return the mean time of a call per operation, µs. */
    Map<String, Double> getMeanMicrosByOperation();

    /** @return the mean time a call waited for other ranks, per operation, µs. */
    Map<String, Double> getMeanPeerWaitMicrosByOperation();

    /** @return the time under which half the calls completed (a power of two), per operation, µs. */
    Map<String, Double> getMedianMicrosAtMostByOperation();

    /** @return the time under which 99 % of the calls completed (a power of two), per operation, µs. */
    Map<String, Double> getP99MicrosAtMostByOperation();

    /** @return the latest call's bus bandwidth per operation, GB/s, as nccl-tests computes it. */
    Map<String, Double> getLastBusBandwidthByOperation();

    /** @return calls per operation and size class. */
    Map<String, Long> getCallsBySizeClass();

    /** @return the mean time of a call per operation and size class, µs. */
    Map<String, Double> getMeanMicrosBySizeClass();
}
