package dev.hccl.algorithms;

/**
 * How a buffer is cut: into {@code parts} chunks of nearly equal element counts (the first {@code count % parts}
 * chunks one element longer), and each chunk into segments of at most {@code segmentBytes} for pipelining. Every rank
 * computes the same cuts from the same arguments, so sender and receiver agree on every message's size without
 * telling each other.
 */
final class Partition
{
    private final int elementSize;
    private final int base;
    private final int remainder;
    private final int segmentElements;

    /**
     * Cuts {@code count} elements into {@code parts} chunks.
     *
     * @param count        elements in all.
     * @param parts        chunks, at least 1.
     * @param elementSize  bytes per element.
     * @param segmentBytes bytes per segment at most.
     */
    Partition(final int count, final int parts, final int elementSize, final int segmentBytes)
    {
        this.elementSize = elementSize;
        this.base = count / parts;
        this.remainder = count % parts;
        this.segmentElements = Math.max(1, segmentBytes / elementSize);
    }

    /**
     * A partition whose chunks all hold {@code chunkCount} elements (the blocks of allGather, reduceScatter,
     * allToAll).
     *
     * @param chunkCount   elements per chunk.
     * @param parts        chunks.
     * @param elementSize  bytes per element.
     * @param segmentBytes bytes per segment at most.
     * @return the partition.
     */
    static Partition blocks(final int chunkCount, final int parts, final int elementSize, final int segmentBytes)
    {
        return new Partition(chunkCount * parts, parts, elementSize, segmentBytes);
    }

    int chunkElements(final int chunk)
    {
        return base + (chunk < remainder ? 1 : 0);
    }

    int chunkOffset(final int chunk)
    {
        return (chunk * base + Math.min(chunk, remainder)) * elementSize;
    }

    int segments(final int chunk)
    {
        final int elements = chunkElements(chunk);
        return (elements + segmentElements - 1) / segmentElements;
    }

    int segmentOffset(final int chunk, final int segment)
    {
        return chunkOffset(chunk) + segment * segmentElements * elementSize;
    }

    int segmentBytes(final int chunk, final int segment)
    {
        final int start = segment * segmentElements;
        return Math.min(segmentElements, chunkElements(chunk) - start) * elementSize;
    }

    /**
     * Segments of a run of {@code bytes} bytes that is not a chunk of this partition.
     *
     * @param bytes        the run's length.
     * @param segmentBytes bytes per segment at most.
     * @return how many segments, 0 for an empty run.
     */
    static int segmentsOf(final int bytes, final int segmentBytes)
    {
        // In long: bytes + segmentBytes - 1 overflows an int for a buffer within a segment of 2 GiB.
        return (int)(((long)bytes + segmentBytes - 1) / segmentBytes);
    }

    static int mod(final int a, final int n)
    {
        final int m = a % n;
        return m < 0 ? m + n : m;
    }
}
