package dev.hccl.training;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;

/**
 * {@link Compression#powerSgd}: one step of power iteration per training step, as PyTorch DDP's
 * {@code batched_powerSGD_hook}. The bucket's {@code count} FP32 values, plus this rank's error from the last step,
 * are the rows of a matrix M of {@code n} rows and {@code m} columns ({@code m = ceil(sqrt(count))},
 * {@code n = ceil(count / m)}, zero-padded). {@link #start} orthonormalises Q (m x r: the last step's, the warm start;
 * at first from a PRNG seeded by the bucket's size, so the same on every rank), computes P = M Q and starts P's
 * all-reduce (SUM). {@link #finish} orthonormalises the summed P, computes Q = M^T P, all-reduces it (SUM, blocking)
 * and divides it by the world size, and leaves P Q^T in the bucket: the ranks' mean projected onto P's columns, times
 * the world size under SUM. This rank's error becomes M - P Q^T (PyTorch's: this rank's matrix less the mean's
 * approximation), so that over the ranks the errors hold exactly what the results missed.
 * <p>
 * Every rank holds the same P after the first all-reduce and the same Q after the second, and everything computed
 * from them runs in the same order on every rank, so every rank ends with the same bits. The same holds for the
 * checks: where the summed P or Q holds an infinity or a NaN (any rank's non-finite gradient reaches both), or Q is
 * so large that P Q^T could overflow, every rank sees it alike and all-reduces M itself in FP32 instead (the fallback
 * rule of the 16-bit compressions, {@link #fallbacks()}); M carries the error, so the error is then zero.
 * <p>
 * Unlike PyTorch's hook, the padding of M is zero in every step (PyTorch carries the approximation's values there as
 * error, which no gradient ever receives), and a column of Q that vanished (a bucket that was zero everywhere) is
 * drawn again from the PRNG, in the same order on every rank, instead of staying zero for good. Every buffer is
 * allocated here; a step allocates nothing.
 */
final class PowerSgdCodec implements BucketCodec
{
    /** A column whose norm fell below this fraction of its norm before the projections is linearly dependent. */
    private static final double DEPENDENT = 1e-6;
    /** Draws of a vanished column of Q before it is left at zero (a random vector is dependent with chance 0). */
    private static final int DRAWS = 4;

    private final Communicator comm;
    private final int count;
    private final int rows;
    private final int columns;
    private final int rank;
    private final boolean average;
    /** M between start and finish; this rank's error between steps. Row-major, n x m, zero beyond count. */
    private final float[] matrix;
    /** P, column-major (n x r): this rank's, then the sum of every rank's, orthonormalised in place. */
    private final float[] p;
    /** Q, column-major (m x r): the warm start between steps, orthonormalised at the start of one. */
    private final float[] q;
    private final double[] rowSums;
    private final double[] columnSums;
    private final ByteBuffer pWire;
    private final ByteBuffer qWire;
    /** The same seed, and so the same draws, on every rank. */
    private final Random random;
    /** One writer (the thread that runs the bucket); read for metrics by any thread. */
    private volatile int fallbacks;

    private PowerSgdCodec(final Communicator comm, final int count, final int rank, final boolean average)
    {
        this.comm = comm;
        this.count = count;
        this.columns = columns(count);
        this.rows = rows(count);
        this.rank = rank;
        this.average = average;
        this.matrix = new float[Math.multiplyExact(rows, columns)];
        this.p = new float[rows * rank];
        this.q = new float[columns * rank];
        this.rowSums = new double[rank];
        this.columnSums = new double[columns * rank];
        this.pWire = ByteBuffer.allocateDirect(p.length * Float.BYTES).order(ByteOrder.nativeOrder());
        this.qWire = ByteBuffer.allocateDirect(q.length * Float.BYTES).order(ByteOrder.nativeOrder());
        this.random = seeded(count, rank);
        for (int i = 0; i < q.length; i++)
        {
            q[i] = (float)random.nextGaussian();
        }
    }

    /**
     * The PRNG of a bucket's Q: its first values (column by column, {@code (float)nextGaussian()}) and any column drawn
     * again. Seeded by the bucket's size and the rank alone, so the same on every rank; {@link Random}'s sequence is
     * fixed by its specification, so the same on every JVM.
     *
     * @param count elements in the bucket.
     * @param rank  the approximation's rank.
     * @return a new PRNG.
     */
    static Random seeded(final int count, final int rank)
    {
        return new Random(0x5EED_0000_0000L ^ (long)count * 0x9E37_79B9L ^ rank);
    }

    /**
     * The codec of one bucket: PowerSGD, or a plain FP32 all-reduce where the factors would not be smaller than the
     * bucket ({@code (n + m) * rank >= count}), as PyTorch leaves such tensors uncompressed.
     *
     * @param comm    the communicator.
     * @param count   FP32 elements in the bucket, at least 1.
     * @param rank    the approximation's rank, at least 1.
     * @param average whether the result is the mean rather than the sum.
     * @return the codec.
     */
    static BucketCodec forBucket(final Communicator comm, final int count, final int rank, final boolean average)
    {
        return compresses(count, rank) ? new PowerSgdCodec(comm, count, rank, average) :
            new PlainCodec(comm, DataType.FP32, count, average);
    }

    /**
     * @param count elements in a bucket, at least 1.
     * @param rank  the approximation's rank.
     * @return whether P and Q together are fewer elements than the bucket.
     */
    static boolean compresses(final int count, final int rank)
    {
        return ((long)rows(count) + columns(count)) * rank < count;
    }

    /**
     * @param count elements in a bucket, at least 1.
     * @return the columns of its matrix: {@code ceil(sqrt(count))}.
     */
    static int columns(final int count)
    {
        return (int)Math.ceil(Math.sqrt(count));
    }

    /**
     * @param count elements in a bucket, at least 1.
     * @return the rows of its matrix: {@code ceil(count / columns)}.
     */
    static int rows(final int count)
    {
        final int m = columns(count);
        return (count + m - 1) / m;
    }

    @Override
    public CommFuture start(final ByteBuffer flat)
    {
        for (int i = 0; i < count; i++)
        {
            matrix[i] += flat.getFloat(i * Float.BYTES); // error feedback: M = gradients + error
        }
        orthonormalise(q, columns, true);
        // P = M Q, a row of M against each column of Q.
        for (int i = 0; i < rows; i++)
        {
            final int row = i * columns;
            for (int c = 0; c < rank; c++)
            {
                double sum = 0;
                final int col = c * columns;
                for (int j = 0; j < columns; j++)
                {
                    sum += (double)matrix[row + j] * q[col + j];
                }
                p[c * rows + i] = (float)sum;
            }
        }
        put(p, pWire);
        return comm.allReduceAsync(pWire, pWire, p.length, DataType.FP32, ReduceOp.SUM);
    }

    @Override
    public void finish(final ByteBuffer flat)
    {
        if (!get(pWire, p, 1))
        {
            fallBack(flat);
            return;
        }
        orthonormalise(p, rows, false);
        // Q = M^T P, accumulated row by row of M.
        Arrays.fill(columnSums, 0);
        for (int i = 0; i < rows; i++)
        {
            final int row = i * columns;
            for (int c = 0; c < rank; c++)
            {
                final double pic = p[c * rows + i];
                final int col = c * columns;
                for (int j = 0; j < columns; j++)
                {
                    columnSums[col + j] += matrix[row + j] * pic;
                }
            }
        }
        for (int k = 0; k < q.length; k++)
        {
            q[k] = (float)columnSums[k];
        }
        put(q, qWire);
        comm.allReduce(qWire, qWire, q.length, DataType.FP32, ReduceOp.SUM);
        final int ranks = comm.worldSize();
        // P's columns are orthonormal, so |P Q^T| <= rank * max|Q|: below FP32's largest, no value overflows.
        if (!get(qWire, q, ranks) || largest(q) * rank * (average ? 1 : ranks) >= Float.MAX_VALUE)
        {
            fallBack(flat);
            return;
        }
        for (int i = 0; i < count; i++)
        {
            final int row = i / columns;
            final int j = i - row * columns;
            double sum = 0;
            for (int c = 0; c < rank; c++)
            {
                sum += (double)p[c * rows + row] * q[c * columns + j];
            }
            final float approximation = (float)sum;
            flat.putFloat(i * Float.BYTES, average ? approximation : approximation * ranks);
            matrix[i] -= approximation;
        }
    }

    /** All-reduces M itself in FP32, on every rank alike: nothing is left over, so the error is zero. */
    private void fallBack(final ByteBuffer flat)
    {
        fallbacks++;
        for (int i = 0; i < count; i++)
        {
            flat.putFloat(i * Float.BYTES, matrix[i]);
            matrix[i] = 0;
        }
        comm.allReduce(flat, flat, count, DataType.FP32, average ? ReduceOp.AVG : ReduceOp.SUM);
    }

    /**
     * Gram-Schmidt over the {@code rank} columns of {@code length} values, in place and in the same order on every
     * rank. A column that is (nearly) a combination of the ones before it is drawn again from the PRNG where
     * {@code redraw} (Q, which must span {@code rank} directions for the next P), else left at zero (P: its Q column
     * is then zero, and the next step draws it again).
     */
    private void orthonormalise(final float[] columnsOf, final int length, final boolean redraw)
    {
        for (int c = 0; c < rank; c++)
        {
            final int at = c * length;
            for (int draw = 0; ; draw++)
            {
                final double before = norm(columnsOf, at, length);
                for (int d = 0; d < c; d++)
                {
                    final int other = d * length;
                    double dot = 0;
                    for (int k = 0; k < length; k++)
                    {
                        dot += (double)columnsOf[at + k] * columnsOf[other + k];
                    }
                    for (int k = 0; k < length; k++)
                    {
                        columnsOf[at + k] = (float)(columnsOf[at + k] - dot * columnsOf[other + k]);
                    }
                }
                final double after = norm(columnsOf, at, length);
                if (after > 0 && after > DEPENDENT * before)
                {
                    for (int k = 0; k < length; k++)
                    {
                        columnsOf[at + k] = (float)(columnsOf[at + k] / after);
                    }
                    break;
                }
                if (!redraw || draw == DRAWS)
                {
                    Arrays.fill(columnsOf, at, at + length, 0f);
                    break;
                }
                for (int k = 0; k < length; k++)
                {
                    columnsOf[at + k] = (float)random.nextGaussian();
                }
            }
        }
    }

    private static double norm(final float[] values, final int from, final int length)
    {
        double sum = 0;
        for (int k = from; k < from + length; k++)
        {
            sum += (double)values[k] * values[k];
        }
        return Math.sqrt(sum);
    }

    private static float largest(final float[] values)
    {
        float max = 0;
        for (final float v : values)
        {
            max = Math.max(max, Math.abs(v));
        }
        return max;
    }

    private static void put(final float[] values, final ByteBuffer wire)
    {
        for (int k = 0; k < values.length; k++)
        {
            wire.putFloat(k * Float.BYTES, values[k]);
        }
    }

    /** Reads the reduced values, divided by {@code divisor}; false when one is an infinity or a NaN. */
    private static boolean get(final ByteBuffer wire, final float[] values, final int divisor)
    {
        boolean finite = true;
        for (int k = 0; k < values.length; k++)
        {
            final float v = wire.getFloat(k * Float.BYTES) / divisor;
            finite &= Float.isFinite(v);
            values[k] = v;
        }
        return finite;
    }

    @Override
    public long wireBytes()
    {
        return ((long)rows + columns) * rank * Float.BYTES;
    }

    @Override
    public int fallbacks()
    {
        return fallbacks;
    }
}
