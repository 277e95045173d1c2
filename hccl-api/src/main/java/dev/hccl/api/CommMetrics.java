package dev.hccl.api;

import java.util.List;

/**
 * What one rank of a communicator has done, at one moment ({@link Communicator#metrics()}): counters kept for every
 * operation from the communicator's creation, at the cost of a few memory writes an operation and no allocation. The
 * same figures are published as a JMX MBean, {@code dev.hccl:type=Communicator,id=<id>,rank=<rank>}, which jconsole
 * and JDK Mission Control show.
 *
 * @param communicatorId the communicator's id in hexadecimal, as the log, dumps and flight-recorder events give it.
 * @param rank           this rank.
 * @param worldSize      the communicator's ranks.
 * @param operations     each operation that has completed calls, in {@link Operation}'s order.
 * @param stalls         the waits reported as stalled ({@code HCCL_STALL_CHECK_TIME}).
 * @param failure        the communicator's failure, or null while it works.
 */
public record CommMetrics(String communicatorId, int rank, int worldSize, List<OperationMetrics> operations,
    long stalls, HcclException failure)
{
    /**
     * @param communicatorId the communicator's id.
     * @param rank           this rank.
     * @param worldSize      the ranks.
     * @param operations     the operations with calls; copied.
     * @param stalls         the stalls reported.
     * @param failure        the failure, or null.
     */
    public CommMetrics
    {
        operations = List.copyOf(operations);
    }

    /**
     * One operation's counters.
     *
     * @param operation the operation.
     * @return its counters; all zero when it has no calls.
     */
    public OperationMetrics of(final Operation operation)
    {
        for (final OperationMetrics m : operations)
        {
            if (m.operation() == operation)
            {
                return m;
            }
        }
        return new OperationMetrics(operation, 0, 0, 0, 0, 0, 0, 0, new long[OperationMetrics.LATENCY_BUCKETS],
            List.of(), worldSize);
    }

    /**
     * @return the calls completed, of every operation.
     */
    public long calls()
    {
        return operations.stream().mapToLong(OperationMetrics::count).sum();
    }

    /**
     * @return the bytes of every call, summed.
     */
    public long bytes()
    {
        return operations.stream().mapToLong(OperationMetrics::bytes).sum();
    }

    /**
     * @return the calls that failed.
     */
    public long failedCalls()
    {
        return operations.stream().mapToLong(OperationMetrics::failed).sum();
    }
}
