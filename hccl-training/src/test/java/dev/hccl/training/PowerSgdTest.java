package dev.hccl.training;

import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Compression#powerSgd}: its settings, then over three ranks as threads: a truly low-rank mean comes through
 * exactly, every step matches PyTorch's algorithm computed here in double precision (warm start, error feedback,
 * the mean), error feedback loses nothing, every rank holds the same bits, small buckets and non-finite values go as
 * FP32, and ranks that disagree on the rank fail at build.
 */
@Timeout(120)
class PowerSgdTest extends ThreeRanks
{
    /** Element {@code e} of a rank's gradient in a step. */
    private interface Gradients
    {
        float value(int rank, int step, int e);
    }

    @Test
    void theSettingReadsAndWritesAsAUserDoes()
    {
        final Compression two = Compression.powerSgd(2);
        assertEquals(Compression.Kind.POWER_SGD, two.kind());
        assertEquals(6, two.kind().code);
        assertEquals(2, two.rank());
        assertEquals(0, Compression.topK(0.1).rank());
        assertEquals("powerSGD(2)", two.toString());
        assertEquals(two, Compression.parse("powersgd:2"));
        assertEquals(two, Compression.parse(" PowerSGD(2) "));
        assertEquals(two, Compression.parse(two.toString()));
        assertEquals(two.hashCode(), Compression.parse("POWERSGD:2").hashCode());
        assertNotEquals(two, Compression.powerSgd(1));
        assertNotEquals(two.hashCode(), Compression.powerSgd(1).hashCode());
        assertTrue(two.accepts(DataType.FP32));
        assertFalse(two.accepts(DataType.FP16));
        final IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
            () -> Compression.powerSgd(0));
        assertTrue(zero.getMessage().contains("Compression.powerSgd(rank): rank must be at least 1, got 0"),
            zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Compression.parse("powersgd:0"));
        final IllegalArgumentException word = assertThrows(IllegalArgumentException.class,
            () -> Compression.parse("powersgd:one"));
        assertTrue(word.getMessage().contains("as in powersgd:1"), word.getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Compression.parse("lowrank"))
            .getMessage().contains("powersgd:R"));
    }

    @Test
    void theMatrixIsNearSquareAndSmallBucketsAreNotCompressed()
    {
        assertEquals(32, PowerSgdCodec.columns(1000));
        assertEquals(32, PowerSgdCodec.rows(1000));
        assertEquals(60, PowerSgdCodec.columns(3600));
        assertEquals(60, PowerSgdCodec.rows(3600));
        assertEquals(4, PowerSgdCodec.columns(10));
        assertEquals(3, PowerSgdCodec.rows(10));
        assertTrue(PowerSgdCodec.compresses(100, 4)); // (10 + 10) * 4 = 80 < 100
        assertFalse(PowerSgdCodec.compresses(100, 5)); // 100, no gain
        assertTrue(PowerSgdCodec.compresses(10, 1)); // (3 + 4) * 1 = 7 < 10
        assertFalse(PowerSgdCodec.compresses(10, 2));
        assertFalse(PowerSgdCodec.compresses(5, 1)); // (2 + 3) * 1 = 5
    }

    /** Runs {@code steps} steps of one gradient of {@code count} values; returns each rank's results, step by step. */
    private List<float[][]> run(
        final Compression compression, final boolean average, final int count, final int steps,
        final Gradients gradients) throws Exception
    {
        return RankThreads.values(comms, comm ->
        {
            final ByteBuffer g = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
            final float[][] results = new float[steps][count];
            try (GradientSync sync = GradientSync.builder(comm).compression(compression).average(average)
                .bucketCapBytes(count * 4L).firstBucketBytes(count * 4L).build(List.of(g), DataType.FP32))
            {
                for (int s = 0; s < steps; s++)
                {
                    for (int e = 0; e < count; e++)
                    {
                        g.putFloat(e * 4, gradients.value(comm.rank(), s, e));
                    }
                    sync.markReady(0);
                    sync.await();
                    g.asFloatBuffer().get(results[s]);
                }
                assertEquals(0, sync.fallbacks());
            }
            return results;
        });
    }

    private static void assertSameOnEveryRank(final List<float[][]> results)
    {
        for (int r = 1; r < RANKS; r++)
        {
            for (int s = 0; s < results.get(0).length; s++)
            {
                assertArrayEquals(results.get(0)[s], results.get(r)[s], "rank " + r + ", step " + s);
            }
        }
    }

    @Test
    void aMeanOfRankOneComesThroughExactlyOnEveryRank() throws Exception
    {
        // Each rank's bucket is u_rank v^T in the codec's 60 x 60 view, v shared: the mean is of rank 1 too.
        final int side = 60;
        final Gradients outer = (rank, step, e) ->
            GradientSyncTest.value(rank, step, 1, e / side) * GradientSyncTest.value(0, step, 2, e % side);
        for (final boolean average : new boolean[] {true, false})
        {
            final List<float[][]> results = run(Compression.powerSgd(1), average, side * side, 3, outer);
            assertSameOnEveryRank(results);
            for (int s = 0; s < 3; s++)
            {
                for (int e = 0; e < side * side; e++)
                {
                    double sum = 0;
                    for (int r = 0; r < RANKS; r++)
                    {
                        sum += outer.value(r, s, e);
                    }
                    final double expected = average ? sum / RANKS : sum;
                    assertEquals(expected, results.get(0)[s][e], 2e-6 * RANKS, "average " + average + ", step " +
                        s + ", element " + e);
                }
            }
        }
    }

    @Test
    void everyStepIsPyTorchsPowerSgdWithWarmStartAndErrorFeedback() throws Exception
    {
        // 1000 values: a 32 x 32 matrix with 24 zeros of padding; rank 2; gradients of full rank.
        final int count = 1000;
        final int steps = 6;
        final Gradients random = (rank, step, e) -> GradientSyncTest.value(rank, step, 0, e);
        for (final boolean average : new boolean[] {true, false})
        {
            final List<float[][]> results = run(Compression.powerSgd(2), average, count, steps, random);
            assertSameOnEveryRank(results);
            final Reference reference = new Reference(count, 2, average);
            for (int s = 0; s < steps; s++)
            {
                final double[] expected = reference.step(random, s);
                double largest = 0;
                for (final double v : expected)
                {
                    largest = Math.max(largest, Math.abs(v));
                }
                for (int e = 0; e < count; e++)
                {
                    assertEquals(expected[e], results.get(0)[s][e], 1e-4 * largest, "average " + average +
                        ", step " + s + ", element " + e);
                }
            }
        }
    }

    @Test
    void errorFeedbackLosesNothingItOnlySendsItLate() throws Exception
    {
        // The same full-rank gradients every step: what the steps apply adds up to steps times their mean, less
        // the errors still held, which stay bounded while the sum grows.
        final int count = 400;
        final int steps = 60;
        final Gradients constant = (rank, step, e) -> GradientSyncTest.value(rank, 0, 3, e);
        final float[][] applied = run(Compression.powerSgd(1), true, count, steps, constant).get(0);
        double missed = 0;
        double total = 0;
        double firstStepMissed = 0;
        for (int e = 0; e < count; e++)
        {
            double mean = 0;
            for (int r = 0; r < RANKS; r++)
            {
                mean += constant.value(r, 0, e) / RANKS;
            }
            double sum = 0;
            for (int s = 0; s < steps; s++)
            {
                sum += applied[s][e];
            }
            missed += (sum - steps * mean) * (sum - steps * mean);
            total += steps * mean * steps * mean;
            firstStepMissed += (applied[0][e] - mean) * (applied[0][e] - mean) * steps * steps;
        }
        final double relative = Math.sqrt(missed / total);
        // One step's rank-1 approximation of a 20 x 20 random matrix misses about half of it (0.49 measured); without
        // error feedback every step would miss as much. With it the 60 steps' sum missed 0.029 of itself.
        assertTrue(Math.sqrt(firstStepMissed / total) > 0.3, "first step " + Math.sqrt(firstStepMissed / total));
        assertTrue(relative < 0.1, "after " + steps + " steps the applied sum misses " + relative + " of it");
    }

    @Test
    void smallBucketsGoAsTheyAreAndTheWireCarriesTheFactors() throws Exception
    {
        final List<Object[]> results = RankThreads.values(comms, comm ->
        {
            final List<ByteBuffer> grads = List.of(ByteBuffer.allocateDirect(4000).order(ByteOrder.nativeOrder()),
                ByteBuffer.allocateDirect(20).order(ByteOrder.nativeOrder()));
            for (int g = 0; g < 2; g++)
            {
                for (int e = 0; e < grads.get(g).capacity() / 4; e++)
                {
                    grads.get(g).putFloat(e * 4, GradientSyncTest.value(comm.rank(), 0, g, e));
                }
            }
            // Reverse order: the 5 values fill the first bucket, the 1000 the second.
            try (GradientSync sync = GradientSync.builder(comm).compression(Compression.powerSgd(1))
                .firstBucketBytes(20).bucketCapBytes(4000).build(grads, DataType.FP32))
            {
                sync.markReady(0);
                sync.markReady(1);
                sync.await();
                final float[] small = new float[5];
                grads.get(1).asFloatBuffer().get(small);
                return new Object[] {sync.lastStep(), small};
            }
        });
        final StepReport report = (StepReport)results.get(0)[0];
        assertEquals(2, report.buckets());
        assertEquals((32 + 32) * 4 + 5 * 4, report.wireBytes(), "P and Q of the large bucket, the small one whole");
        final float[] small = (float[])results.get(0)[1];
        for (int e = 0; e < 5; e++)
        {
            double sum = 0;
            for (int r = 0; r < RANKS; r++)
            {
                sum += GradientSyncTest.value(r, 0, 1, e);
            }
            assertEquals(sum / RANKS, small[e], 1e-6, "element " + e + " of the uncompressed bucket");
        }
    }

    @Test
    void aNonFiniteValueFallsBackToFp32OnEveryRankAndClearsTheError() throws Exception
    {
        final int side = 40;
        // Step 0 of random gradients leaves an error behind; step 1 holds an infinity on rank 1; step 2 is of rank 1
        // across ranks, which comes through exactly only if the fallback sent the error and cleared it.
        final Gradients gradients = (rank, step, e) -> switch (step)
        {
            case 0 -> GradientSyncTest.value(rank, 0, 0, e);
            case 1 -> rank == 1 && e == 7 ? Float.POSITIVE_INFINITY : GradientSyncTest.value(rank, 1, 0, e);
            default -> GradientSyncTest.value(rank, step, 1, e / side) * GradientSyncTest.value(0, step, 2, e % side);
        };
        final List<Object[]> results = RankThreads.values(comms, comm ->
        {
            final ByteBuffer g = ByteBuffer.allocateDirect(side * side * 4).order(ByteOrder.nativeOrder());
            final float[][] out = new float[3][side * side];
            final int[] fallbacks = new int[3];
            final float[] error = new float[side * side];
            try (GradientSync sync = GradientSync.builder(comm).compression(Compression.powerSgd(1))
                .build(List.of(g), DataType.FP32))
            {
                for (int s = 0; s < 3; s++)
                {
                    for (int e = 0; e < side * side; e++)
                    {
                        g.putFloat(e * 4, gradients.value(comm.rank(), s, e));
                        error[e] = s == 1 ? error[e] + g.getFloat(e * 4) : error[e];
                    }
                    sync.markReady(0);
                    sync.await();
                    g.asFloatBuffer().get(out[s]);
                    fallbacks[s] = sync.lastStep().fallbacks();
                    if (s == 0)
                    {
                        for (int e = 0; e < side * side; e++)
                        {
                            error[e] = GradientSyncTest.value(comm.rank(), 0, 0, e) - out[0][e];
                        }
                    }
                }
            }
            return new Object[] {out, fallbacks, error};
        });
        for (int r = 0; r < RANKS; r++)
        {
            final float[][] out = (float[][])results.get(r)[0];
            assertArrayEquals(new int[] {0, 1, 0}, (int[])results.get(r)[1], "rank " + r + "'s fallbacks per step");
            assertArrayEquals(((float[][])results.get(0)[0])[1], out[1], "rank " + r + ", the fallback");
            assertArrayEquals(((float[][])results.get(0)[0])[2], out[2], "rank " + r + ", the step after");
        }
        final float[][] out = (float[][])results.get(0)[0];
        assertEquals(Float.POSITIVE_INFINITY, out[1][7]);
        for (int e = 0; e < side * side; e++)
        {
            double owed = 0; // the step's gradients plus the error of step 0, as the fallback sent them
            double rankOne = 0;
            for (int r = 0; r < RANKS; r++)
            {
                owed += ((float[])results.get(r)[2])[e];
                rankOne += gradients.value(r, 2, e);
            }
            if (e != 7)
            {
                assertEquals(owed / RANKS, out[1][e], 1e-5, "fallback, element " + e);
            }
            assertEquals(rankOne / RANKS, out[2][e], 1e-5, "after the fallback, element " + e);
        }
    }

    @Test
    void ranksThatDisagreeOnTheRankFailNamingBoth() throws Exception
    {
        final List<RankThreads.Outcome<Object>> outcomes = RankThreads.each(comms, comm ->
            GradientSync.builder(comm).compression(Compression.powerSgd(comm.rank() == 2 ? 2 : 1))
                .build(GradientSyncTest.gradients(comm.rank(), 0, DataType.FP32), DataType.FP32));
        for (final RankThreads.Outcome<Object> o : outcomes)
        {
            final HcclException ex = assertInstanceOf(HcclException.class, o.failure());
            assertEquals(ErrorCode.E_MISMATCH, ex.errorCode());
            assertTrue(ex.getMessage().contains("powerSGD rank: rank 0 has 1, rank 2 has 2"), ex.getMessage());
        }
        for (final RankThreads.Outcome<GradientSync> o : RankThreads.each(comms, comm ->
            GradientSync.builder(comm).compression(comm.rank() == 1 ? Compression.topK(0.1) : Compression.powerSgd(1))
                .build(GradientSyncTest.gradients(comm.rank(), 0, DataType.FP32), DataType.FP32)))
        {
            assertTrue(o.failure().getMessage().contains("compression: rank 0 has powerSGD, rank 1 has topK"),
                o.failure().getMessage());
        }
        for (final RankThreads.Outcome<GradientSync> o : RankThreads.each(comms, comm ->
            GradientSync.builder(comm).compression(Compression.powerSgd(1))
                .build(GradientSyncTest.gradients(comm.rank(), 0, DataType.FP16), DataType.FP16)))
        {
            assertTrue(o.failure().getMessage().contains("compression powerSGD(1) applies to FP32 gradients"),
                o.failure().getMessage());
        }
    }

    /**
     * PyTorch's {@code batched_powerSGD_hook} over every rank at once, in double precision: M = gradients + error,
     * Q orthonormalised (the last step's; at first the codec's PRNG's), P = sum of M Q, orthonormalised, Q = sum of
     * M^T P divided by the ranks, the result P Q^T (times the ranks for a sum), the error M - P Q^T.
     */
    private static final class Reference
    {
        private final int count;
        private final int n;
        private final int m;
        private final int rank;
        private final boolean average;
        private final double[][] error;
        private final double[] q;

        Reference(final int count, final int rank, final boolean average)
        {
            this.count = count;
            this.m = (int)Math.ceil(Math.sqrt(count));
            this.n = (count + m - 1) / m;
            this.rank = rank;
            this.average = average;
            this.error = new double[RANKS][n * m];
            this.q = new double[m * rank];
            final Random random = PowerSgdCodec.seeded(count, rank);
            for (int i = 0; i < q.length; i++)
            {
                q[i] = (float)random.nextGaussian();
            }
        }

        double[] step(final Gradients gradients, final int step)
        {
            final double[][] matrices = new double[RANKS][n * m];
            for (int r = 0; r < RANKS; r++)
            {
                for (int e = 0; e < count; e++)
                {
                    matrices[r][e] = gradients.value(r, step, e) + error[r][e];
                }
            }
            orthonormalise(q, m);
            final double[] p = new double[n * rank];
            for (final double[] matrix : matrices)
            {
                for (int i = 0; i < n; i++)
                {
                    for (int c = 0; c < rank; c++)
                    {
                        for (int j = 0; j < m; j++)
                        {
                            p[c * n + i] += matrix[i * m + j] * q[c * m + j];
                        }
                    }
                }
            }
            orthonormalise(p, n);
            Arrays.fill(q, 0);
            for (final double[] matrix : matrices)
            {
                for (int i = 0; i < n; i++)
                {
                    for (int c = 0; c < rank; c++)
                    {
                        for (int j = 0; j < m; j++)
                        {
                            q[c * m + j] += matrix[i * m + j] * p[c * n + i] / RANKS;
                        }
                    }
                }
            }
            final double[] result = new double[count];
            for (int e = 0; e < count; e++)
            {
                double approximation = 0;
                for (int c = 0; c < rank; c++)
                {
                    approximation += p[c * n + e / m] * q[c * m + e % m];
                }
                result[e] = average ? approximation : approximation * RANKS;
                for (int r = 0; r < RANKS; r++)
                {
                    error[r][e] = matrices[r][e] - approximation;
                }
            }
            return result;
        }

        private void orthonormalise(final double[] columns, final int length)
        {
            for (int c = 0; c < rank; c++)
            {
                for (int d = 0; d < c; d++)
                {
                    double dot = 0;
                    for (int k = 0; k < length; k++)
                    {
                        dot += columns[c * length + k] * columns[d * length + k];
                    }
                    for (int k = 0; k < length; k++)
                    {
                        columns[c * length + k] -= dot * columns[d * length + k];
                    }
                }
                double norm = 0;
                for (int k = 0; k < length; k++)
                {
                    norm += columns[c * length + k] * columns[c * length + k];
                }
                for (int k = 0; k < length; k++)
                {
                    columns[c * length + k] /= Math.sqrt(norm);
                }
            }
        }
    }
}
