package dev.hccl.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import dev.hccl.api.Communicator;
import dev.hccl.training.GradientSync;
import dev.hccl.training.GradientSyncBuilder;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Moves a DJL model's gradients through a {@link GradientSync} once per step: each parameter's gradient is copied from
 * the engine's memory into its bucket view and marked ready, the buckets are all-reduced (averaged), and the results
 * are copied back, so that the optimizer then applies the mean over the ranks.
 * <p>
 * The gradients are registered last parameter first, the order a backward pass finishes them, as DDP registers them:
 * the first (small) bucket holds the last layers, and the buckets' all-reduces start while the earlier layers'
 * gradients are still being copied. DJL's backward pass is one engine call with no hook per parameter, so the
 * all-reduces cannot overlap it; they overlap the copying only.
 * <p>
 * Gradient accumulation needs nothing of it: several backward passes add into the engine's gradients, and the one
 * step after them all-reduces their sums once, as DDP's {@code no_sync()} arranges.
 */
final class GradientBridge implements AutoCloseable
{
    private final Communicator comm;
    private final ModelParameters parameters;
    /** The trained parameters' indices in {@link #parameters}, in registration order (last parameter first). */
    private final int[] trained;
    private final GradientSync sync;
    private final List<ByteBuffer> buckets;
    private boolean checked;

    private GradientBridge(
        final Communicator comm, final ModelParameters parameters, final int[] trained, final GradientSync sync)
    {
        this.comm = comm;
        this.parameters = parameters;
        this.trained = trained;
        this.sync = sync;
        this.buckets = sync.gradients();
    }

    /**
     * Builds the helper over the parameters that take a gradient; collective.
     *
     * @param comm       the ranks.
     * @param parameters the model's, the same on every rank.
     * @param settings   the user's settings of the helper, applied after the trainer's (averaging on).
     * @return the bridge.
     */
    static GradientBridge build(
        final Communicator comm, final ModelParameters parameters, final Consumer<GradientSyncBuilder> settings)
    {
        final List<Integer> trained = new ArrayList<>();
        for (int i = parameters.size() - 1; i >= 0; i--)
        {
            if (parameters.parameter(i).requiresGradient())
            {
                final NDArray array = parameters.array(i);
                if (array.getDataType() != DataType.FLOAT32)
                {
                    throw new IllegalArgumentException("DataParallelTrainer.initialize on rank " + comm.rank() +
                        ": parameter " + parameters.name(i) + " is " + array.getDataType() + "; the gradients are " +
                        "averaged as float32: keep trained parameters in float32 (compress on the wire instead: " +
                        "DataParallel.gradientSync(s -> s.compression(Compression.bf16())))");
                }
                trained.add(i);
            }
        }
        if (trained.isEmpty())
        {
            throw new IllegalArgumentException("DataParallelTrainer.initialize on rank " + comm.rank() + ": the model " +
                "has no parameter that takes a gradient; there is nothing to train");
        }
        final long[] counts = new long[trained.size()];
        for (int g = 0; g < counts.length; g++)
        {
            counts[g] = parameters.array(trained.get(g)).size();
        }
        final GradientSyncBuilder builder = GradientSync.builder(comm).average(true);
        settings.accept(builder);
        final GradientSync sync = builder.buildViews(counts, dev.hccl.api.DataType.FP32);
        return new GradientBridge(comm, parameters, trained.stream().mapToInt(Integer::intValue).toArray(), sync);
    }

    GradientSync gradientSync()
    {
        return sync;
    }

    /** Replaces every trained parameter's gradient by its mean over the ranks; collective. */
    void allReduce()
    {
        for (int g = 0; g < trained.length; g++)
        {
            try (NDArray gradient = gradient(g))
            {
                final ByteBuffer memory = gradient.toByteBuffer(true);
                final ByteBuffer bucket = buckets.get(g).duplicate();
                if (memory.remaining() != bucket.remaining())
                {
                    throw new IllegalStateException("DataParallelTrainer.step on rank " + comm.rank() + ": the " +
                        "gradient of " + parameters.name(trained[g]) + " has " + memory.remaining() + " bytes, its " +
                        "parameter had " + bucket.remaining() + " at initialize; parameters must keep their shapes");
                }
                bucket.put(memory);
            }
            sync.markReady(g);
        }
        sync.await();
        for (int g = 0; g < trained.length; g++)
        {
            try (NDArray gradient = gradient(g))
            {
                final ByteBuffer memory = gradient.toByteBuffer(true);
                memory.put(buckets.get(g).duplicate());
                if (!checked)
                {
                    try (NDArray again = gradient(g))
                    {
                        ModelParameters.written(again, memory, "the gradient of " + parameters.name(trained[g]) +
                            " on rank " + comm.rank() + " (a parameter that takes no part in the loss has no " +
                            "gradient: use every parameter that requires one in every step, or turn its gradient off)");
                    }
                }
            }
        }
        checked = true;
    }

    private NDArray gradient(final int g)
    {
        return parameters.array(trained[g]).getGradient();
    }

    @Override
    public void close()
    {
        sync.close();
    }
}
