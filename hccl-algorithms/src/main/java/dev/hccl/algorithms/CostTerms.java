package dev.hccl.algorithms;

import dev.hccl.api.Operation;

/**
 * The terms the alpha-beta-gamma formulas of {@link CostedAlgorithm#predictSeconds} share, so that every algorithm
 * rounds and checks its arguments the same way.
 */
final class CostTerms
{
    private CostTerms()
    {
    }

    /**
     * Rounds of a schedule that doubles its reach each round: {@code ceil(log2 n)}, 0 for one rank.
     *
     * @param n ranks, at least 1.
     * @return the rounds.
     */
    static int ceilLog2(final int n)
    {
        return 32 - Integer.numberOfLeadingZeros(n - 1);
    }

    /**
     * The part of {@code bytes} a rank sends or receives when it exchanges all but its own {@code 1/n}:
     * {@code (n-1)/n bytes}.
     *
     * @param n     ranks, at least 1.
     * @param bytes the whole buffer.
     * @return bytes, as a double.
     */
    static double share(final int n, final long bytes)
    {
        return (double)bytes * (n - 1) / n;
    }

    /**
     * Validates the arguments every formula takes.
     *
     * @param worldSize ranks, at least 1.
     * @param bytes     not negative.
     * @throws IllegalArgumentException otherwise.
     */
    static void check(final int worldSize, final long bytes)
    {
        if (worldSize < 1 || bytes < 0)
        {
            throw new IllegalArgumentException(
                "worldSize must be at least 1 and bytes not negative, got " + worldSize + " and " + bytes);
        }
    }

    /**
     * The refusal of an operation an algorithm does not implement.
     *
     * @param name      the algorithm.
     * @param operation the operation asked for.
     * @return the exception, to throw.
     */
    static IllegalArgumentException unsupported(final String name, final Operation operation)
    {
        return new IllegalArgumentException("'" + name + "' does not implement " + operation.displayName());
    }
}
