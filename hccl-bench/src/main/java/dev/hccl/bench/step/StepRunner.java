package dev.hccl.bench.step;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.util.List;

/**
 * Times one {@link StepVariant} on this rank and gathers every rank's times: the strategy is built, run untimed
 * {@code warmups} times, then timed {@code iterations} times, each step after a barrier, and closed. Collective: every
 * rank runs the same variants in the same order.
 */
final class StepRunner
{
    private final Communicator comm;
    private final List<ByteBuffer> gradients;
    private final StepSettings settings;

    /**
     * @param comm      the communicator.
     * @param gradients this rank's gradients.
     * @param settings  the benchmark's settings.
     */
    StepRunner(final Communicator comm, final List<ByteBuffer> gradients, final StepSettings settings)
    {
        this.comm = comm;
        this.gradients = gradients;
        this.settings = settings;
    }

    /**
     * @param variant    what to time.
     * @param backwardMs the simulated backward pass, in milliseconds.
     * @return the result, the same on every rank.
     */
    StepResult run(final StepVariant variant, final double backwardMs)
    {
        final SimulatedBackward backward = new SimulatedBackward(elements(), Math.round(backwardMs * 1e6),
            settings.compute());
        final int n = settings.iterations();
        final long[] mine = new long[2 * n];
        final int collectives;
        final long wire;
        final long[] caps;
        int fallbacks = 0;
        int tuningSteps = variant.autotune() ? 0 : -1;
        try (StepStrategy strategy = strategy(variant))
        {
            // Autotune's trials first, as in training: every rank ends them at the same step.
            if (variant.autotune())
            {
                do
                {
                    comm.barrier();
                    strategy.step(backward);
                    tuningSteps++;
                }
                while (strategy.tuning());
            }
            for (int i = 0; i < settings.warmups(); i++)
            {
                comm.barrier();
                strategy.step(backward);
            }
            for (int i = 0; i < n; i++)
            {
                comm.barrier();
                final long start = System.nanoTime();
                final long computed = strategy.step(backward);
                mine[i] = System.nanoTime() - start;
                mine[n + i] = computed;
                fallbacks += strategy.fallbacks();
            }
            collectives = strategy.collectives();
            wire = strategy.wireBytes();
            caps = strategy.bucketCaps();
        }
        // The closed strategy's direct buffers go back before the next variant allocates its own.
        System.gc();
        return gather(variant, backwardMs, caps, tuningSteps, collectives, wire, fallbacks, mine);
    }

    private StepStrategy strategy(final StepVariant variant)
    {
        return switch (variant.mode())
        {
            case PER_TENSOR -> new PerTensorStep(comm, gradients, false);
            case PER_TENSOR_ASYNC -> new PerTensorStep(comm, gradients, true);
            case BUCKETS, OVERLAP -> new FusedStep(comm, gradients, settings.views(),
                variant.mode() == StepMode.OVERLAP, variant.compression(), variant.bucketCap(),
                settings.firstBucketBytes(), variant.autotune());
        };
    }

    private StepResult gather(
        final StepVariant variant, final double backwardMs, final long[] caps, final int tuningSteps,
        final int collectives, final long wire, final int fallbacks, final long[] mine)
    {
        final int n = mine.length / 2;
        final int ranks = comm.worldSize();
        final ByteBuffer send = ByteBuffer.allocateDirect(mine.length * Long.BYTES).order(ByteOrder.nativeOrder());
        send.asLongBuffer().put(mine);
        final ByteBuffer recv = ByteBuffer.allocateDirect(ranks * mine.length * Long.BYTES)
            .order(ByteOrder.nativeOrder());
        comm.allGather(send, recv, mine.length, DataType.INT64);
        final LongBuffer all = recv.asLongBuffer();
        final long[] step = new long[n];
        final long[] compute = new long[n];
        final long[] exposed = new long[n];
        for (int r = 0; r < ranks; r++)
        {
            for (int i = 0; i < n; i++)
            {
                final long s = all.get(r * mine.length + i);
                final long c = all.get(r * mine.length + n + i);
                step[i] = Math.max(step[i], s);
                compute[i] = Math.max(compute[i], c);
                exposed[i] = Math.max(exposed[i], s - c);
            }
        }
        return new StepResult(backwardMs, variant.mode().cliName(), variant.compression().toString(), caps[0], caps[1],
            tuningSteps, collectives,
            wire, fallbacks, step, compute, exposed);
    }

    private long[] elements()
    {
        return gradients.stream().mapToLong(b -> b.remaining() / Float.BYTES).toArray();
    }
}
