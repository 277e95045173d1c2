package dev.hccl.training;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The settings of a {@link GradientSync}, from {@link GradientSync#builder(Communicator)}. Every rank must build with
 * the same settings over gradients of the same sizes; {@link #build} checks it, collectively.
 */
public final class GradientSyncBuilder
{
    /** PyTorch DDP's {@code bucket_cap_mb}. */
    public static final long DEFAULT_BUCKET_CAP_BYTES = 25L << 20;
    /** PyTorch DDP's first bucket, small so that the first all-reduce starts early in the backward pass. */
    public static final long DEFAULT_FIRST_BUCKET_BYTES = 1L << 20;

    private static final Logger LOG = LoggerFactory.getLogger(GradientSync.class);
    /** Whether this process has said that {@code HCCL_AUTOTUNE} was skipped: once is enough. */
    private static final AtomicBoolean ENVIRONMENT_AUTOTUNE_SKIPPED = new AtomicBoolean();

    private final Communicator comm;
    private long bucketCapBytes = DEFAULT_BUCKET_CAP_BYTES;
    private long firstBucketBytes = DEFAULT_FIRST_BUCKET_BYTES;
    private boolean average = true;
    private Compression compression = Compression.none();
    private boolean overlap = true;
    /** Set on the builder, when {@link #autotuneSet}; else {@link Autotune#SETTING} decides. */
    private Autotune autotune;
    private boolean autotuneSet;

    GradientSyncBuilder(final Communicator comm)
    {
        if (comm == null)
        {
            throw new IllegalArgumentException("GradientSync.builder(comm): comm must not be null");
        }
        this.comm = comm;
    }

    /**
     * The most bytes a bucket holds, unless one gradient alone is larger (it then has a bucket of its own). Larger
     * buckets mean fewer collectives; smaller ones start sooner.
     *
     * @param bytes at least 1; default 25 MiB.
     * @return this builder.
     */
    public GradientSyncBuilder bucketCapBytes(final long bytes)
    {
        this.bucketCapBytes = positive("bucketCapBytes", bytes);
        return this;
    }

    /**
     * The cap of the first bucket, which holds the last gradients registered, usually the first the backward pass
     * produces.
     *
     * @param bytes at least 1; default 1 MiB.
     * @return this builder.
     */
    public GradientSyncBuilder firstBucketBytes(final long bytes)
    {
        this.firstBucketBytes = positive("firstBucketBytes", bytes);
        return this;
    }

    /**
     * @param average true for the mean over the ranks (the default), false for the sum.
     * @return this builder.
     */
    public GradientSyncBuilder average(final boolean average)
    {
        this.average = average;
        return this;
    }

    /**
     * @param compression how the buckets travel; default {@link Compression#none()}.
     * @return this builder.
     */
    public GradientSyncBuilder compression(final Compression compression)
    {
        if (compression == null)
        {
            throw new IllegalArgumentException("compression must not be null; Compression.none() sends as is");
        }
        this.compression = compression;
        return this;
    }

    /**
     * @param overlap true (the default) to start a bucket's collective as soon as its last gradient is marked ready,
     *                false to start them all in {@link GradientSync#await()}, for comparison.
     * @return this builder.
     */
    public GradientSyncBuilder overlap(final boolean overlap)
    {
        this.overlap = overlap;
        return this;
    }

    /**
     * Tunes the bucket sizes over the first steps of training, as {@link Autotune} says, starting from
     * {@link #bucketCapBytes} and {@link #firstBucketBytes}. Unless set here, {@link Autotune#SETTING}
     * ({@code HCCL_AUTOTUNE=1}) turns it on with {@link Autotune#defaults()}, so that a launcher can.
     * <p>
     * Not with {@link Compression#topK} or {@link Compression#powerSgd}: changing the buckets would drop what their
     * error feedback holds back. Asked for here, that is an error at build; asked for by {@code HCCL_AUTOTUNE}, the
     * helper runs without autotune, and rank 0 says so in a WARN.
     *
     * @param autotune the search, or null to keep the sizes set.
     * @return this builder.
     */
    public GradientSyncBuilder autotune(final Autotune autotune)
    {
        this.autotune = autotune;
        this.autotuneSet = true;
        return this;
    }

    /**
     * Builds over the model's own gradient buffers: each gradient's data runs from its buffer's position to its limit,
     * which must stay as they are. At each step the gradients are copied into their bucket's buffer as they are marked
     * ready (Horovod's tensor fusion) and the results copied back in {@link GradientSync#await()}.
     * <p>
     * Collective: every rank calls it with the same settings and gradient sizes.
     *
     * @param gradients direct buffers, at least one.
     * @param type      FP32, FP16 or BF16; compression other than none needs FP32.
     * @return the helper.
     * @throws IllegalArgumentException naming the gradient, when a buffer is not direct, holds a partial element or
     *                                  too many bytes, or the type does not fit.
     * @throws dev.hccl.api.HcclException {@code E_MISMATCH} on every rank when the ranks' settings or sizes differ.
     */
    public GradientSync build(final List<ByteBuffer> gradients, final DataType type)
    {
        return GradientRegistration.overBuffers(this, gradients, type);
    }

    /**
     * Builds with the gradients allocated by the helper, as views of the buckets' buffers (DDP's
     * {@code gradient_as_bucket_view}): no copy into or out of the buckets. The model writes its gradients into
     * {@link GradientSync#gradients()}.
     * <p>
     * Collective: every rank calls it with the same settings and counts.
     *
     * @param elementCounts each gradient's elements, at least one gradient.
     * @param type          FP32, FP16 or BF16; compression other than none needs FP32.
     * @return the helper.
     * @throws IllegalArgumentException when a count is negative or a bucket would exceed 2 GiB.
     * @throws dev.hccl.api.HcclException {@code E_MISMATCH} on every rank when the ranks' settings or sizes differ.
     */
    public GradientSync buildViews(final long[] elementCounts, final DataType type)
    {
        return GradientRegistration.overViews(this, elementCounts, type);
    }

    Communicator comm()
    {
        return comm;
    }

    long bucketCapBytes()
    {
        return bucketCapBytes;
    }

    long firstBucketBytes()
    {
        return firstBucketBytes;
    }

    boolean average()
    {
        return average;
    }

    Compression compression()
    {
        return compression;
    }

    boolean overlap()
    {
        return overlap;
    }

    /** The search to run: the one set here, else {@code HCCL_AUTOTUNE}'s where the compression allows it. */
    Autotune autotune()
    {
        if (autotuneSet)
        {
            return autotune;
        }
        if (!comm.setting(Autotune.SETTING))
        {
            return null;
        }
        if (compression.feedsErrorBack())
        {
            if (comm.rank() == 0 && ENVIRONMENT_AUTOTUNE_SKIPPED.compareAndSet(false, true))
            {
                LOG.warn("GradientSync: {}=1 is ignored for compression {}, whose error feedback a change of " +
                    "buckets would drop; its buckets stay at {} MiB (first {} MiB). Unset {} for this job, or set " +
                    "the bucket sizes on the builder", Autotune.SETTING.variable(), compression,
                    bucketCapBytes / (double)(1 << 20), firstBucketBytes / (double)(1 << 20),
                    Autotune.SETTING.variable());
            }
            return null;
        }
        return Autotune.defaults();
    }

    private static long positive(final String name, final long bytes)
    {
        if (bytes < 1)
        {
            throw new IllegalArgumentException(name + " must be at least 1 byte, got " + bytes);
        }
        return bytes;
    }
}
