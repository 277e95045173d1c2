package dev.hccl.training;

/**
 * A scope of gradient accumulation ({@link GradientSync#noSync()}), as PyTorch DDP's {@code no_sync()}: until it
 * closes, steps ({@code markReady} for each gradient, then {@code await()}, called as always) start no collective and
 * leave every gradient as this rank's model left it; the first step after it all-reduces what was accumulated, once.
 * The model accumulates: its backward pass adds each micro-batch's gradient into the gradient buffers (and zeroes them
 * after the step that synchronises, as before any step). So k micro-steps inside the scope and one after cost one
 * synchronisation, and give the mean over the ranks of each rank's sum of its k + 1 micro-batches' gradients.
 * <pre>{@code
 * try (NoSync accumulate = sync.noSync()) {
 *     for (int micro = 0; micro < k; micro++) {
 *         backward(micro);   // adds into sync.gradients(), marks each ready
 *         sync.await();      // returns at once: nothing is sent
 *     }
 * }
 * backward(k);               // the last micro-batch, outside: its step all-reduces the sums
 * sync.await();
 * }</pre>
 * Every rank must accumulate the same number of steps, as every rank must issue the same collectives.
 */
public final class NoSync implements AutoCloseable
{
    private final Runnable end;
    private boolean open = true;

    NoSync(final Runnable end)
    {
        this.end = end;
    }

    /**
     * Ends the accumulation: the next step all-reduces the gradients. Idempotent.
     *
     * @throws IllegalStateException in the middle of a step: gradients marked and {@code await()} not yet called.
     */
    @Override
    public void close()
    {
        if (open)
        {
            end.run();
            open = false;
        }
    }
}
