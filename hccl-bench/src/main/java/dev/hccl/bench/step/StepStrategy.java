package dev.hccl.bench.step;

/**
 * One way of synchronising a step's gradients, built once over one rank's gradients and run step after step. Every
 * rank runs the same strategy at the same time: each step is collective.
 */
interface StepStrategy extends AutoCloseable
{
    /**
     * Runs one step: the simulated backward pass, handing each gradient over as it is ready, then waits until every
     * gradient holds the mean over the ranks.
     *
     * @param backward the simulated backward pass.
     * @return the nanoseconds the backward pass spent computing.
     */
    long step(SimulatedBackward backward);

    /**
     * @return the collectives one step issues.
     */
    int collectives();

    /**
     * @return the payload bytes this rank put into the last step's collectives.
     */
    long wireBytes();

    /**
     * @return the buckets the last step had to all-reduce again uncompressed (fp16 or bf16 overflowed); 0 for the
     * strategies that do not compress.
     */
    default int fallbacks()
    {
        return 0;
    }

    /**
     * @return whether the strategy is still finding its settings (autotune): such steps come before the warm-up.
     */
    default boolean tuning()
    {
        return false;
    }

    /**
     * @return the bucket cap and first bucket cap in use; zeros for the strategies without buckets.
     */
    default long[] bucketCaps()
    {
        return new long[2];
    }

    /** Releases what the strategy allocated; collectives under way are waited for. */
    @Override
    void close();
}
