package dev.hccl.algorithms;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Segment counts stay right up to the largest buffer Java has.
 */
class PartitionTest
{
    @Test
    void segmentCountsDoNotOverflowNearTwoGibibytes()
    {
        final int segment = 512 * 1024;
        assertEquals(4096, Partition.segmentsOf(Integer.MAX_VALUE, segment));
        assertEquals(4096, Partition.segmentsOf(Integer.MAX_VALUE - segment + 2, segment));
        assertEquals(4095, Partition.segmentsOf(4095 * segment, segment));
        assertEquals(1, Partition.segmentsOf(1, segment));
        assertEquals(0, Partition.segmentsOf(0, segment));
    }
}
