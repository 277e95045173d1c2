package dev.hccl.djl;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shards: a partition of each epoch's order among the ranks, the same sizes everywhere, one process's batches. */
@Timeout(60)
class DistributedSamplerTest
{
    @ParameterizedTest(name = "{0} records, {1} ranks, batch {2}")
    @CsvSource({"512, 4, 16", "100, 3, 8", "7, 4, 2", "1, 2, 1", "30, 1, 4"})
    void theRanksBatchesTogetherAreOneProcesssBatches(final int size, final int ranks, final int batch)
    {
        final DistributedSampler one = new DistributedSampler(batch * ranks, true, 99, 0, 1);
        final List<List<Long>> whole = drain(one.batches(size));
        final List<List<List<Long>>> shards = new ArrayList<>();
        for (int r = 0; r < ranks; r++)
        {
            shards.add(drain(new DistributedSampler(batch, true, 99, r, ranks).batches(size)));
        }
        for (int r = 1; r < ranks; r++)
        {
            assertEquals(shards.get(0).size(), shards.get(r).size(), "every rank takes as many steps");
            for (int s = 0; s < shards.get(0).size(); s++)
            {
                assertEquals(shards.get(0).get(s).size(), shards.get(r).get(s).size(), "step " + s + "'s batches");
            }
        }
        if (size % ranks == 0)
        {
            // Without padding, step s of the ranks is the one process's batch s, record for record.
            assertEquals(whole.size(), shards.get(0).size());
            for (int s = 0; s < whole.size(); s++)
            {
                final List<Long> together = new ArrayList<>();
                for (final List<List<Long>> shard : shards)
                {
                    together.addAll(shard.get(s));
                }
                together.sort(null);
                final List<Long> expected = new ArrayList<>(whole.get(s));
                expected.sort(null);
                assertEquals(expected, together, "step " + s);
            }
        }
        // Every record is visited; padding repeats fewer than one per rank.
        final long[] visited = shards.stream().flatMap(List::stream).flatMap(List::stream).mapToLong(Long::longValue)
            .sorted().toArray();
        assertArrayEquals(LongStream.range(0, size).toArray(), Arrays.stream(visited).distinct().toArray());
        assertTrue(visited.length - size < ranks, visited.length + " visits of " + size + " records");
    }

    @Test
    void eachEpochShufflesAnewAndSetEpochReplaysOne()
    {
        final DistributedSampler sampler = new DistributedSampler(4, true, 5, 1, 2);
        final List<List<Long>> first = drain(sampler.batches(64));
        final List<List<Long>> second = drain(sampler.batches(64));
        assertFalse(first.equals(second), "the second epoch has another order");
        assertEquals(2, sampler.nextEpoch());
        sampler.setEpoch(1);
        assertEquals(second, drain(sampler.batches(64)), "a resumed job draws epoch 1 as the first run did");
        final List<List<Long>> unshuffled = drain(new DistributedSampler(4, false, 5, 1, 2).batches(10));
        assertEquals(List.of(List.of(1L, 3L, 5L, 7L), List.of(9L)), unshuffled);
    }

    @Test
    void dropLastDropsTheTailAndThePartialBatch()
    {
        // 13 records on 3 ranks: record 12 is dropped, each rank keeps 4; with batch 3, the partial batch goes too.
        final List<List<Long>> batches = drain(new DistributedSampler(2, false, 0, 0, 3, true).batches(13));
        assertEquals(List.of(List.of(0L, 3L), List.of(6L, 9L)), batches);
        assertEquals(List.of(List.of(1L, 4L, 7L)), drain(new DistributedSampler(3, false, 0, 1, 3, true).batches(13)));
        assertEquals(List.of(List.of(2L, 5L)), drain(new DistributedSampler(2, false, 0, 2, 3, true).batches(8)));
    }

    @Test
    void badArgumentsAreRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> new DistributedSampler(0, true, 0, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> new DistributedSampler(1, true, 0, 2, 2));
        assertThrows(IllegalArgumentException.class, () -> new DistributedSampler(1, true, 0, 0, 2).setEpoch(-1));
    }

    private static List<List<Long>> drain(final Iterator<List<Long>> batches)
    {
        final List<List<Long>> all = new ArrayList<>();
        batches.forEachRemaining(all::add);
        return all;
    }
}
