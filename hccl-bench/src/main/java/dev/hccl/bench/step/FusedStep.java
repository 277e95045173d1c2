package dev.hccl.bench.step;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.training.Autotune;
import dev.hccl.training.Compression;
import dev.hccl.training.GradientSync;
import dev.hccl.training.GradientSyncBuilder;
import dev.hccl.training.StepReport;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * {@link GradientSync} over the gradients: {@link StepMode#BUCKETS} (overlap off) or {@link StepMode#OVERLAP}, with
 * a compression. Each gradient is marked ready as the backward pass finishes it; the step ends with {@code await()}.
 */
final class FusedStep implements StepStrategy
{
    private final GradientSync sync;

    /**
     * Builds the helper; collective.
     *
     * @param comm        the communicator.
     * @param gradients   this rank's FP32 gradients, copied into the buckets as they are marked (DDP's default).
     * @param views       true to let the helper allocate the gradients as views of its buckets instead (DDP's
     *                    {@code gradient_as_bucket_view}): no copies; {@code gradients} then only give the sizes.
     * @param overlap     whether buckets start as soon as they are complete.
     * @param compression how the buckets travel.
     * @param bucketCap   the buckets' cap in bytes.
     * @param firstBucket the first bucket's cap in bytes.
     * @param autotune    whether the helper tunes its bucket sizes, from these caps, with the defaults.
     */
    FusedStep(
        final Communicator comm, final List<ByteBuffer> gradients, final boolean views, final boolean overlap,
        final Compression compression, final long bucketCap, final long firstBucket, final boolean autotune)
    {
        final GradientSyncBuilder builder = GradientSync.builder(comm).bucketCapBytes(bucketCap)
            .firstBucketBytes(firstBucket).average(true).compression(compression).overlap(overlap)
            .autotune(autotune ? Autotune.defaults() : null);
        if (views)
        {
            this.sync = builder.buildViews(gradients.stream().mapToLong(b -> b.remaining() / Float.BYTES).toArray(),
                DataType.FP32);
            for (int g = 0; g < gradients.size(); g++)
            {
                sync.gradients().get(g).duplicate().put(gradients.get(g).duplicate());
            }
        }
        else
        {
            this.sync = builder.build(gradients, DataType.FP32);
        }
    }

    @Override
    public long step(final SimulatedBackward backward)
    {
        final long computed = backward.run(sync::markReady);
        sync.await();
        return computed;
    }

    @Override
    public int collectives()
    {
        return sync.bucketCount();
    }

    @Override
    public long wireBytes()
    {
        final StepReport last = sync.lastStep();
        return last == null ? 0 : last.wireBytes();
    }

    @Override
    public int fallbacks()
    {
        final StepReport last = sync.lastStep();
        return last == null ? 0 : last.fallbacks();
    }

    @Override
    public boolean tuning()
    {
        final StepReport last = sync.lastStep();
        return last != null && last.tuning() == StepReport.Tuning.TRIAL;
    }

    @Override
    public long[] bucketCaps()
    {
        return new long[] {sync.bucketCapBytes(), sync.firstBucketBytes()};
    }

    @Override
    public void close()
    {
        sync.close();
    }
}
