package dev.hccl.bench;

/**
 * One line of the results table.
 *
 * @param algo       the algorithm the row ran with, or {@code default}.
 * @param size       bytes, as nccl-tests counts them for the operation.
 * @param count      the call's count argument.
 * @param type       nccl-tests' name of the data type, or {@code none}.
 * @param redop      nccl-tests' name of the reduction, or {@code none}.
 * @param root       the root, or -1 for operations without one.
 * @param outOfPlace the out-of-place measurement.
 * @param inPlace    the in-place measurement.
 */
public record BenchRow(
    String algo, long size, long count, String type, String redop, int root, Measurement outOfPlace,
    Measurement inPlace)
{
}
