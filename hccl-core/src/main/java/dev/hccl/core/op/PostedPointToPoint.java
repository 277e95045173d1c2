package dev.hccl.core.op;

import dev.hccl.api.HcclException;

import java.util.ArrayDeque;

/**
 * The point-to-point operations a communicator has posted and not yet seen complete: a collective waits for them
 * first, as it would on a stream. Used by whoever runs the stream's operations, one thread at a time.
 * <p>
 * Adding is amortised O(1): completed operations are dropped from the head as they are found, and the whole queue is
 * swept only when it has doubled since the last sweep, so that thousands posted at once do not cost a scan each.
 */
final class PostedPointToPoint
{
    private static final int FIRST_SWEEP = 64;

    private final ArrayDeque<PointToPointOp> ops = new ArrayDeque<>();
    private int sweepAt = FIRST_SWEEP;

    /**
     * Remembers a posted operation.
     *
     * @param op the operation, its transfers in flight.
     */
    void add(final PointToPointOp op)
    {
        while (!ops.isEmpty() && ops.peekFirst().isDone())
        {
            ops.pollFirst();
        }
        if (ops.size() >= sweepAt)
        {
            ops.removeIf(PointToPointOp::isDone);
            sweepAt = Math.max(FIRST_SWEEP, 2 * ops.size());
        }
        ops.addLast(op);
    }

    /**
     * Waits for every operation posted so far. A failure among them has failed the communicator, which the caller's
     * next operation reports; it is not thrown here.
     *
     * @param onFailure told of each operation that failed.
     */
    void completeAll(final FailureSink onFailure)
    {
        PointToPointOp op;
        while ((op = ops.pollFirst()) != null)
        {
            try
            {
                op.join();
            }
            catch (final HcclException ex)
            {
                onFailure.failed(op, ex);
            }
        }
        sweepAt = FIRST_SWEEP;
    }

    /**
     * How many operations are remembered: those in flight, and some completed ones not yet dropped.
     *
     * @return the count.
     */
    int size()
    {
        return ops.size();
    }

    @FunctionalInterface
    interface FailureSink
    {
        void failed(PointToPointOp op, HcclException cause);
    }
}
