package dev.hccl.training;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;

/** {@link Compression#none()}: the bucket is all-reduced in place, in the gradients' own type. */
final class PlainCodec implements BucketCodec
{
    private final Communicator comm;
    private final DataType type;
    private final long count;
    private final ReduceOp op;

    /**
     * @param comm    the communicator.
     * @param type    the gradients' type.
     * @param count   elements in the bucket.
     * @param average whether the result is the mean rather than the sum.
     */
    PlainCodec(final Communicator comm, final DataType type, final long count, final boolean average)
    {
        this.comm = comm;
        this.type = type;
        this.count = count;
        this.op = average ? ReduceOp.AVG : ReduceOp.SUM;
    }

    @Override
    public CommFuture start(final ByteBuffer flat)
    {
        return comm.allReduceAsync(flat, flat, count, type, op);
    }

    @Override
    public void finish(final ByteBuffer flat)
    {
        // The all-reduce left the result in place.
    }

    @Override
    public long wireBytes()
    {
        return count * type.size();
    }
}
