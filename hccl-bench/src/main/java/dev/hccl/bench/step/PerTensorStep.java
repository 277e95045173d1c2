package dev.hccl.bench.step;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * One FP32 average all-reduce per gradient, in place, issued as the backward pass makes the gradient ready: blocking
 * ({@link StepMode#PER_TENSOR}, each call returns before the backward pass goes on) or asynchronous
 * ({@link StepMode#PER_TENSOR_ASYNC}, all joined once the backward pass is over).
 */
final class PerTensorStep implements StepStrategy
{
    private final Communicator comm;
    private final List<ByteBuffer> gradients;
    private final boolean async;
    private final CommFuture[] futures;

    /**
     * @param comm      the communicator.
     * @param gradients this rank's gradients, FP32, native order, each from position 0 to its limit.
     * @param async     whether the all-reduces are asynchronous.
     */
    PerTensorStep(final Communicator comm, final List<ByteBuffer> gradients, final boolean async)
    {
        this.comm = comm;
        this.gradients = gradients;
        this.async = async;
        this.futures = new CommFuture[gradients.size()];
    }

    @Override
    public long step(final SimulatedBackward backward)
    {
        final long computed = backward.run(g ->
        {
            final ByteBuffer b = gradients.get(g);
            final long count = b.remaining() / Float.BYTES;
            if (async)
            {
                futures[g] = comm.allReduceAsync(b, b, count, DataType.FP32, ReduceOp.AVG);
            }
            else
            {
                comm.allReduce(b, b, count, DataType.FP32, ReduceOp.AVG);
            }
        });
        joinAll();
        return computed;
    }

    @Override
    public int collectives()
    {
        return gradients.size();
    }

    @Override
    public long wireBytes()
    {
        return gradients.stream().mapToLong(ByteBuffer::remaining).sum();
    }

    @Override
    public void close()
    {
        joinAll();
    }

    private void joinAll()
    {
        for (int g = futures.length - 1; g >= 0; g--)
        {
            final CommFuture f = futures[g];
            futures[g] = null;
            if (f != null)
            {
                f.join();
            }
        }
    }
}
