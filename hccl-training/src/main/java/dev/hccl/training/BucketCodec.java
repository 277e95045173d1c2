package dev.hccl.training;

import dev.hccl.api.CommFuture;

import java.nio.ByteBuffer;

/**
 * How one bucket is reduced across the ranks: the wire format of a {@link Compression}. A codec belongs to one
 * bucket and keeps that bucket's buffers (the wire, the residual) from step to step. Calls come one at a time, in
 * step order: {@link #start} when the bucket is complete, then {@link #finish} once its future completed.
 */
interface BucketCodec
{
    /**
     * Starts the bucket's collective.
     *
     * @param flat the bucket's values on this rank, from position 0 to the limit; the codec may change them.
     * @return the collective's future.
     */
    CommFuture start(ByteBuffer flat);

    /**
     * Leaves the reduced values in {@code flat}, the same bits on every rank.
     *
     * @param flat the bucket's buffer, as given to {@link #start}.
     */
    void finish(ByteBuffer flat);

    /**
     * @return the bytes of payload this rank puts into the bucket's collective each step.
     */
    long wireBytes();

    /**
     * @return how many times a step had to repeat the bucket uncompressed, since the codec was made.
     */
    default int fallbacks()
    {
        return 0;
    }
}
