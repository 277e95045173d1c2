package dev.hccl.bench;

import java.util.List;

/**
 * Every row of one run of the sweep (one per {@code --algo} value) and its footer figures.
 *
 * @param algo        the algorithm, or {@code default}.
 * @param rows        the rows, in the order printed.
 * @param outOfBounds nccl-tests' "out of bounds values": the checks in which a rank found a wrong element, summed over
 *                    ranks (so one bad measurement on two ranks counts 2), whatever the number of wrong elements.
 * @param avgBusBw    mean busbw over every row's out-of-place and in-place measurement, as nccl-tests' footer.
 */
public record Sweep(String algo, List<BenchRow> rows, long outOfBounds, double avgBusBw)
{
    /**
     * Copies the rows.
     *
     * @param algo        the algorithm.
     * @param rows        the rows.
     * @param outOfBounds wrong elements.
     * @param avgBusBw    mean busbw.
     */
    public Sweep
    {
        rows = List.copyOf(rows);
    }
}
