package dev.hccl.djl;

import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Sampler;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;

/**
 * This rank's shard of a dataset in batches, as PyTorch's {@code DistributedSampler} under a {@code DataLoader}: each
 * epoch the dataset's indices are shuffled with a seed and the epoch (the same order on every rank), padded by
 * repeating the first indices up to a multiple of the world size, and rank {@code r} takes every world-size-th index
 * from {@code r}. Every rank so gets the same number of batches of the same sizes, so that every rank takes the same
 * number of steps, and the ranks' batch {@code s} together are batch {@code s} of one process sampling the same
 * epoch with a batch of world size x {@code batchSize}: N ranks step as that one process does.
 * <p>
 * Each {@link #sample} starts the next epoch (DJL's datasets call it once per pass); {@link #setEpoch} sets the next
 * one, as a job resumed from a checkpoint needs. Without shuffle the order is the dataset's, still padded and
 * strided; {@code dropLast} drops the tail that does not fill a multiple of the world size instead of padding, and
 * then the last partial batch.
 */
public final class DistributedSampler implements Sampler
{
    /** Mixes the epoch into the seed, so that epochs' orders are unrelated. */
    private static final long EPOCH_MIX = 0x9E3779B97F4A7C15L;

    private final int batchSize;
    private final boolean shuffle;
    private final long seed;
    private final int rank;
    private final int worldSize;
    private final boolean dropLast;
    private long nextEpoch;

    /**
     * A sampler of this rank's shard, padded, keeping a last partial batch.
     *
     * @param batchSize this rank's batch, at least 1.
     * @param shuffle   whether each epoch shuffles (training) or keeps the dataset's order (evaluation).
     * @param seed      the shuffle's seed: the same on every rank.
     * @param rank      this rank, 0 to {@code worldSize - 1}.
     * @param worldSize the ranks sharing the dataset.
     */
    public DistributedSampler(
        final int batchSize, final boolean shuffle, final long seed, final int rank, final int worldSize)
    {
        this(batchSize, shuffle, seed, rank, worldSize, false);
    }

    /**
     * A sampler of this rank's shard.
     *
     * @param batchSize this rank's batch, at least 1.
     * @param shuffle   whether each epoch shuffles (training) or keeps the dataset's order (evaluation).
     * @param seed      the shuffle's seed: the same on every rank.
     * @param rank      this rank, 0 to {@code worldSize - 1}.
     * @param worldSize the ranks sharing the dataset.
     * @param dropLast  drop the tail that does not fill every rank alike, and a last partial batch, instead of padding
     *                  and keeping them.
     */
    public DistributedSampler(
        final int batchSize, final boolean shuffle, final long seed, final int rank, final int worldSize,
        final boolean dropLast)
    {
        if (batchSize < 1)
        {
            throw new IllegalArgumentException("DistributedSampler: batchSize is " + batchSize + "; give 1 or more");
        }
        if (worldSize < 1 || rank < 0 || rank >= worldSize)
        {
            throw new IllegalArgumentException("DistributedSampler: rank " + rank + " of " + worldSize +
                " ranks; give a world size of 1 or more and a rank from 0 to the world size - 1");
        }
        this.batchSize = batchSize;
        this.shuffle = shuffle;
        this.seed = seed;
        this.rank = rank;
        this.worldSize = worldSize;
        this.dropLast = dropLast;
    }

    /**
     * Sets the epoch that the next {@link #sample} draws, so that a resumed job shuffles as the first run would have.
     *
     * @param epoch the epoch, from 0.
     */
    public void setEpoch(final long epoch)
    {
        if (epoch < 0)
        {
            throw new IllegalArgumentException("DistributedSampler: epoch " + epoch + " is negative");
        }
        this.nextEpoch = epoch;
    }

    /**
     * The epoch the next {@link #sample} draws.
     *
     * @return it, from 0.
     */
    public long nextEpoch()
    {
        return nextEpoch;
    }

    @Override
    public Iterator<List<Long>> sample(final RandomAccessDataset dataset)
    {
        return batches(dataset.size());
    }

    /**
     * The next epoch's batches of a dataset of {@code size} records.
     *
     * @param size the dataset's size.
     * @return the batches.
     */
    Iterator<List<Long>> batches(final long size)
    {
        return new Batches(shard(size, nextEpoch++));
    }

    @Override
    public int getBatchSize()
    {
        return batchSize;
    }

    /**
     * This rank's indices of an epoch, in the order it visits them.
     *
     * @param size  the dataset's size.
     * @param epoch the epoch.
     * @return the indices.
     */
    long[] shard(final long size, final long epoch)
    {
        if (size > Integer.MAX_VALUE - 8)
        {
            throw new IllegalArgumentException("DistributedSampler: a dataset of " + size + " records is over the " +
                "2^31 that one epoch's order can hold; split it into datasets of fewer");
        }
        final int n = (int)size;
        final long[] order = new long[n];
        for (int i = 0; i < n; i++)
        {
            order[i] = i;
        }
        if (shuffle)
        {
            final SplittableRandom random = new SplittableRandom(seed + epoch * EPOCH_MIX);
            for (int i = n - 1; i > 0; i--)
            {
                final int j = random.nextInt(i + 1);
                final long swap = order[i];
                order[i] = order[j];
                order[j] = swap;
            }
        }
        if (n == 0)
        {
            return new long[0];
        }
        final int perRank = (int)(dropLast ? n / worldSize : ((long)n + worldSize - 1) / worldSize);
        final long[] shard = new long[perRank];
        for (int k = 0; k < perRank; k++)
        {
            // Padding repeats the order from its start, as torch does, so that every rank has perRank indices.
            shard[k] = order[(int)((rank + (long)k * worldSize) % n)];
        }
        return shard;
    }

    /** The batches of one epoch's shard. */
    private final class Batches implements Iterator<List<Long>>
    {
        private final long[] shard;
        private final int end;
        private int next;

        Batches(final long[] shard)
        {
            this.shard = shard;
            this.end = dropLast ? shard.length - shard.length % batchSize : shard.length;
        }

        @Override
        public boolean hasNext()
        {
            return next < end;
        }

        @Override
        public List<Long> next()
        {
            if (!hasNext())
            {
                throw new NoSuchElementException("DistributedSampler: the epoch's batches are over");
            }
            final int to = Math.min(end, next + batchSize);
            final List<Long> batch = new ArrayList<>(to - next);
            for (int k = next; k < to; k++)
            {
                batch.add(shard[k]);
            }
            next = to;
            return batch;
        }
    }
}
