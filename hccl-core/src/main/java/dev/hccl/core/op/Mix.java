package dev.hccl.core.op;

/**
 * SplitMix64's finaliser, for the ids and hashes every rank must derive alike from the same inputs (new
 * communicators' ids, the history close() confirms): well spread, and the same on every JVM.
 */
public final class Mix
{
    private Mix()
    {
    }

    /**
     * @param z the input.
     * @return it, mixed.
     */
    public static long finish(final long z)
    {
        long x = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return x ^ (x >>> 31);
    }
}
