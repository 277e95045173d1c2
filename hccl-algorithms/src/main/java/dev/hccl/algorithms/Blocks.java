package dev.hccl.algorithms;

/**
 * Blocks of different sizes at given places in a buffer (the blocks of the V collectives), each cut into segments of
 * at most {@code segmentBytes} for pipelining. Every rank builds the same blocks from the same counts, so sender and
 * receiver agree on every message's size without telling each other. An empty block has no segments and offset 0.
 */
final class Blocks
{
    private final int[] offsets;
    private final int[] lengths;
    private final int segmentBytes;

    /**
     * Blocks at the given displacements.
     *
     * @param counts       elements of each block.
     * @param displs       where each block starts, in elements.
     * @param elementSize  bytes per element.
     * @param segmentBytes bytes per segment at most.
     */
    Blocks(final int[] counts, final int[] displs, final int elementSize, final int segmentBytes)
    {
        this.offsets = new int[counts.length];
        this.lengths = new int[counts.length];
        this.segmentBytes = alignedSegmentBytes(segmentBytes, elementSize);
        for (int b = 0; b < counts.length; b++)
        {
            lengths[b] = counts[b] * elementSize;
            offsets[b] = lengths[b] == 0 ? 0 : displs[b] * elementSize;
        }
    }

    /**
     * Blocks packed one after another in block order, from byte 0.
     *
     * @param counts       elements of each block.
     * @param elementSize  bytes per element.
     * @param segmentBytes bytes per segment at most.
     * @return the blocks.
     */
    static Blocks packed(final int[] counts, final int elementSize, final int segmentBytes)
    {
        final int[] displs = new int[counts.length];
        int next = 0;
        for (int b = 0; b < counts.length; b++)
        {
            displs[b] = next;
            next += counts[b];
        }
        return new Blocks(counts, displs, elementSize, segmentBytes);
    }

    /**
     * The largest segment of whole elements that fits {@code segmentBytes}, at least one element: a reduction never
     * splits an element between two messages.
     *
     * @param segmentBytes bytes per segment at most.
     * @param elementSize  bytes per element.
     * @return bytes per segment, a multiple of {@code elementSize}.
     */
    static int alignedSegmentBytes(final int segmentBytes, final int elementSize)
    {
        return Math.max(1, segmentBytes / elementSize) * elementSize;
    }

    int offset(final int block)
    {
        return offsets[block];
    }

    int bytes(final int block)
    {
        return lengths[block];
    }

    /**
     * The bytes of every block together.
     */
    int totalBytes()
    {
        int total = 0;
        for (final int length : lengths)
        {
            total += length;
        }
        return total;
    }

    int segments(final int block)
    {
        return Partition.segmentsOf(lengths[block], segmentBytes);
    }

    int segmentOffset(final int block, final int segment)
    {
        return offsets[block] + segment * segmentBytes;
    }

    int segmentBytes(final int block, final int segment)
    {
        return Math.min(segmentBytes, lengths[block] - segment * segmentBytes);
    }
}
