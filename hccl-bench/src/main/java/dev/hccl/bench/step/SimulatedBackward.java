package dev.hccl.bench.step;

import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * A backward pass without the arithmetic: it visits the gradients in reverse registration order and, before each
 * is ready, takes that gradient's share of the total time, in proportion to its elements. {@link Compute#SPIN} keeps
 * the calling thread busy, as a real backward pass keeps a core busy (it competes for the cores with the
 * communication); {@link Compute#SLEEP} parks it, leaving the cores to the communication.
 */
final class SimulatedBackward
{
    /** How the simulated computation spends its time. */
    enum Compute
    {
        /** Busy-waits on the calling thread. */
        SPIN,
        /** Parks the calling thread. */
        SLEEP
    }

    /** Receives each gradient as the simulated pass finishes it. */
    @FunctionalInterface
    interface Ready
    {
        /**
         * @param gradient the gradient now ready, in registration order.
         */
        void ready(int gradient);
    }

    private final long[] shareNanos;
    private final Compute compute;

    /**
     * @param elements   each gradient's elements, in registration order.
     * @param totalNanos the whole pass; 0 makes every gradient ready at once.
     * @param compute    how the time is spent.
     */
    SimulatedBackward(final long[] elements, final long totalNanos, final Compute compute)
    {
        final double total = Arrays.stream(elements).sum();
        this.shareNanos = new long[elements.length];
        for (int g = 0; g < elements.length; g++)
        {
            shareNanos[g] = total == 0 ? 0 : Math.round(totalNanos * (elements[g] / total));
        }
        this.compute = compute;
    }

    /**
     * Runs one pass: for the last gradient first, its share of the time, then {@code ready}.
     *
     * @param ready what the training loop does with a gradient once it is ready.
     * @return the nanoseconds spent computing, not counting {@code ready}'s own time.
     */
    long run(final Ready ready)
    {
        long computed = 0;
        for (int g = shareNanos.length - 1; g >= 0; g--)
        {
            if (shareNanos[g] > 0)
            {
                final long start = System.nanoTime();
                spend(start, shareNanos[g]);
                computed += System.nanoTime() - start;
            }
            ready.ready(g);
        }
        return computed;
    }

    private void spend(final long start, final long nanos)
    {
        final long end = start + nanos;
        if (compute == Compute.SLEEP)
        {
            for (long left = nanos; left > 0; left = end - System.nanoTime())
            {
                LockSupport.parkNanos(left);
            }
        }
        else
        {
            while (System.nanoTime() < end)
            {
                Thread.onSpinWait();
            }
        }
    }
}
