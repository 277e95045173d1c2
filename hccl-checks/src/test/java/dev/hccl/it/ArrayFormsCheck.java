package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.ReduceOp;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Checks of {@link Communicator}'s array forms (allReduce, broadcast, allGather, reduceScatter of {@code float[]},
 * {@code double[]}, {@code int[]} and {@code long[]}) from one rank: every rank computes what every rank holds from
 * its rank number, so each can compare its own result with the expected one. The values are small integers, exact in
 * every type and under any order of summation.
 */
final class ArrayFormsCheck
{
    private static final int[] LENGTHS = {0, 1, 7, 1000};

    private ArrayFormsCheck()
    {
    }

    /**
     * Runs every array form at each length on this rank.
     *
     * @param comm this rank's communicator; every rank runs this together.
     * @return what went wrong, one line per wrong result; empty when all are right.
     */
    static List<String> run(final Communicator comm)
    {
        final List<String> errors = new ArrayList<>();
        final int n = comm.worldSize();
        final int r = comm.rank();
        for (final int length : LENGTHS)
        {
            final long[] mine = values(r, length);
            final long[] sum = new long[length];
            final long[] gathered = new long[length * n];
            for (int q = 0; q < n; q++)
            {
                final long[] theirs = values(q, length);
                System.arraycopy(theirs, 0, gathered, q * length, length);
                for (int i = 0; i < length; i++)
                {
                    sum[i] += theirs[i];
                }
            }
            final long[] root = values(n - 1, length);
            // reduceScatter input: rank q sends q + k at index k, so block r of the SUM is n * (r * length + j) plus
            // 0 + 1 + ... + (n - 1).
            final long[] scatterIn = new long[length * n];
            final long[] scattered = new long[length];
            for (int k = 0; k < scatterIn.length; k++)
            {
                scatterIn[k] = r + k;
            }
            for (int j = 0; j < length; j++)
            {
                scattered[j] = (long)n * (r * length + j) + (long)n * (n - 1) / 2;
            }

            final float[] f = floats(mine);
            comm.allReduce(f, ReduceOp.SUM);
            check(errors, "allReduce(float[])", length, sum, longs(f));
            final float[] fb = floats(r == n - 1 ? root : new long[length]);
            comm.broadcast(fb, n - 1);
            check(errors, "broadcast(float[])", length, root, longs(fb));
            final float[] fg = new float[length * n];
            comm.allGather(floats(mine), fg);
            check(errors, "allGather(float[])", length, gathered, longs(fg));
            final float[] fs = new float[length];
            comm.reduceScatter(floats(scatterIn), fs, ReduceOp.SUM);
            check(errors, "reduceScatter(float[])", length, scattered, longs(fs));

            final double[] d = doubles(mine);
            comm.allReduce(d, ReduceOp.SUM);
            check(errors, "allReduce(double[])", length, sum, longs(d));
            final double[] db = doubles(r == n - 1 ? root : new long[length]);
            comm.broadcast(db, n - 1);
            check(errors, "broadcast(double[])", length, root, longs(db));
            final double[] dg = new double[length * n];
            comm.allGather(doubles(mine), dg);
            check(errors, "allGather(double[])", length, gathered, longs(dg));
            final double[] ds = new double[length];
            comm.reduceScatter(doubles(scatterIn), ds, ReduceOp.SUM);
            check(errors, "reduceScatter(double[])", length, scattered, longs(ds));

            final int[] i = ints(mine);
            comm.allReduce(i, ReduceOp.SUM);
            check(errors, "allReduce(int[])", length, sum, longs(i));
            final int[] ib = ints(r == n - 1 ? root : new long[length]);
            comm.broadcast(ib, n - 1);
            check(errors, "broadcast(int[])", length, root, longs(ib));
            final int[] ig = new int[length * n];
            comm.allGather(ints(mine), ig);
            check(errors, "allGather(int[])", length, gathered, longs(ig));
            final int[] is = new int[length];
            comm.reduceScatter(ints(scatterIn), is, ReduceOp.SUM);
            check(errors, "reduceScatter(int[])", length, scattered, longs(is));

            final long[] l = mine.clone();
            comm.allReduce(l, ReduceOp.SUM);
            check(errors, "allReduce(long[])", length, sum, l);
            final long[] lb = r == n - 1 ? root.clone() : new long[length];
            comm.broadcast(lb, n - 1);
            check(errors, "broadcast(long[])", length, root, lb);
            final long[] lg = new long[length * n];
            comm.allGather(mine.clone(), lg);
            check(errors, "allGather(long[])", length, gathered, lg);
            final long[] ls = new long[length];
            comm.reduceScatter(scatterIn.clone(), ls, ReduceOp.SUM);
            check(errors, "reduceScatter(long[])", length, scattered, ls);
        }
        return errors;
    }

    /** Rank {@code rank}'s input: {@code rank * 10000 + i + 1} at index {@code i}, distinct across ranks. */
    private static long[] values(final int rank, final int length)
    {
        final long[] v = new long[length];
        for (int i = 0; i < length; i++)
        {
            v[i] = rank * 10_000L + i + 1;
        }
        return v;
    }

    private static void check(
        final List<String> errors, final String call, final int length, final long[] expected, final long[] actual)
    {
        if (!Arrays.equals(expected, actual))
        {
            int at = 0;
            while (at < Math.min(expected.length, actual.length) && expected[at] == actual[at])
            {
                at++;
            }
            errors.add(call + " at length " + length + ": first difference at " + at + " of " + expected.length +
                ", expected " + (at < expected.length ? expected[at] : "nothing") + ", got " +
                (at < actual.length ? actual[at] : "nothing"));
        }
    }

    private static float[] floats(final long[] v)
    {
        final float[] a = new float[v.length];
        for (int i = 0; i < v.length; i++)
        {
            a[i] = v[i];
        }
        return a;
    }

    private static double[] doubles(final long[] v)
    {
        return Arrays.stream(v).asDoubleStream().toArray();
    }

    private static int[] ints(final long[] v)
    {
        return Arrays.stream(v).mapToInt(Math::toIntExact).toArray();
    }

    private static long[] longs(final float[] a)
    {
        final long[] v = new long[a.length];
        for (int i = 0; i < a.length; i++)
        {
            v[i] = (long)a[i];
        }
        return v;
    }

    private static long[] longs(final double[] a)
    {
        return Arrays.stream(a).mapToLong(x -> (long)x).toArray();
    }

    private static long[] longs(final int[] a)
    {
        return Arrays.stream(a).asLongStream().toArray();
    }
}
