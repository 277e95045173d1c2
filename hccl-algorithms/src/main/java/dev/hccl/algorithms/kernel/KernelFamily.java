package dev.hccl.algorithms.kernel;

/**
 * The two implementations of the reduction kernels; {@link Reducers#family()} says which one this JVM runs.
 */
public enum KernelFamily
{
    /**
     * Plain Java loops over Unsafe memory accesses, one element at a time (C2 may still auto-vectorize some of them).
     * Always available.
     */
    SCALAR,

    /**
     * Explicit SIMD loops written with the incubating Vector API ({@code jdk.incubator.vector}), each with a scalar tail.
     * Needs a JVM started with {@code --add-modules jdk.incubator.vector}.
     */
    VECTOR
}
