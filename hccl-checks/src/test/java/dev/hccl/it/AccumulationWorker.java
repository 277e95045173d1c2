package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.training.GradientSync;
import dev.hccl.training.NoSync;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Gradient accumulation in a real rank ({@link GradientSync#noSync()}), over two rounds: {@value #MICRO} - 1
 * micro-steps inside a scope, in which the backward pass adds {@code (rank + 1) * (micro + 1)} into every gradient
 * element, and a last one outside; after it every element must be the mean over the ranks of each rank's sum, and the
 * communicator must have run no collective inside the scope. Prints {@code ACCUMULATION OK}, or {@code FAILED} and
 * exits 3.
 */
public final class AccumulationWorker
{
    private static final int MICRO = 4;

    private AccumulationWorker()
    {
    }

    /**
     * @param args unused.
     */
    public static void main(final String[] args)
    {
        try (Communicator comm = Hccl.init();
            GradientSync sync = GradientSync.builder(comm).bucketCapBytes(4096).buildViews(new long[]{3000, 10, 1},
                DataType.FP32))
        {
            final List<ByteBuffer> grads = sync.gradients();
            final int n = comm.worldSize();
            // The mean over the ranks of sum over micro of (rank + 1) * (micro + 1).
            final float expected = (n + 1) / 2f * MICRO * (MICRO + 1) / 2f;
            for (int round = 0; round < 2; round++)
            {
                for (final ByteBuffer g : grads)
                {
                    for (int i = 0; i < g.capacity() / 4; i++)
                    {
                        g.putFloat(4 * i, 0f); // zero_grad
                    }
                }
                final long callsBefore = comm.metrics().calls();
                try (NoSync accumulate = sync.noSync())
                {
                    for (int micro = 0; micro < MICRO - 1; micro++)
                    {
                        backward(sync, grads, (comm.rank() + 1) * (micro + 1));
                        sync.await();
                    }
                }
                check(comm.metrics().calls() == callsBefore, "the scope ran " + (comm.metrics().calls() -
                    callsBefore) + " collectives");
                backward(sync, grads, (comm.rank() + 1) * MICRO);
                sync.await();
                for (int g = 0; g < grads.size(); g++)
                {
                    for (int i = 0; i < grads.get(g).capacity() / 4; i++)
                    {
                        final float v = grads.get(g).getFloat(4 * i);
                        check(Math.abs(v - expected) <= 1e-5f * expected, "round " + round + ", gradient " + g +
                            " element " + i + ": " + v + ", expected " + expected);
                    }
                }
            }
            check(sync.steps() == 2 && sync.accumulatedSteps() == 2 * (MICRO - 1), "steps " + sync.steps() +
                ", accumulated " + sync.accumulatedSteps());
            System.out.println("ACCUMULATION OK");
        }
        catch (final Throwable t)
        {
            System.out.println("FAILED " + t);
            System.exit(3);
        }
    }

    /** A backward pass that adds {@code value} into every element, last gradient first, marking each. */
    private static void backward(final GradientSync sync, final List<ByteBuffer> grads, final float value)
    {
        for (int g = grads.size() - 1; g >= 0; g--)
        {
            final ByteBuffer b = grads.get(g);
            for (int i = 0; i < b.capacity() / 4; i++)
            {
                b.putFloat(4 * i, b.getFloat(4 * i) + value);
            }
            sync.markReady(g);
        }
    }

    private static void check(final boolean holds, final String otherwise)
    {
        if (!holds)
        {
            throw new IllegalStateException(otherwise);
        }
    }
}
