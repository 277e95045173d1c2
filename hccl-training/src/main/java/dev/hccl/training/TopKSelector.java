package dev.hccl.training;

import java.nio.FloatBuffer;

/**
 * Picks the {@code k} elements largest in magnitude in linear expected time: a three-way quickselect (so that runs
 * of equal values, zeros above all, cost no more than others) finds the k-th largest magnitude, then one pass takes
 * every element above it and, in index order, as many equal to it as fit. A NaN counts as the largest magnitude, so
 * that it travels and shows in the result instead of hiding in a residual.
 */
final class TopKSelector
{
    private float[] scratch = new float[0];
    private long seed = 0x9E37_79B9_7F4A_7C15L;

    /**
     * @param values the elements, from index 0 to {@code count}.
     * @param count  how many.
     * @param k      how many to pick, from 1 to {@code count}.
     * @param picked receives the picked indices, ascending, in its first {@code k} places.
     */
    void select(final FloatBuffer values, final int count, final int k, final int[] picked)
    {
        if (scratch.length < count)
        {
            scratch = new float[count];
        }
        for (int i = 0; i < count; i++)
        {
            scratch[i] = magnitude(values.get(i));
        }
        final float threshold = kthSmallest(scratch, count, count - k);
        int above = 0;
        for (int i = 0; i < count; i++)
        {
            if (magnitude(values.get(i)) > threshold)
            {
                above++;
            }
        }
        int ties = k - above;
        int n = 0;
        for (int i = 0; i < count; i++)
        {
            final float m = magnitude(values.get(i));
            if (m > threshold || (m == threshold && ties-- > 0))
            {
                picked[n++] = i;
            }
        }
    }

    private static float magnitude(final float value)
    {
        return Float.isNaN(value) ? Float.POSITIVE_INFINITY : Math.abs(value);
    }

    /**
     * The value that would stand at {@code rank} if {@code a[0, count)} were sorted ascending; reorders the array.
     */
    private float kthSmallest(final float[] a, final int count, final int rank)
    {
        int lo = 0;
        int hi = count - 1;
        while (lo < hi)
        {
            final float pivot = a[lo + (int)Long.remainderUnsigned(nextRandom(), hi - lo + 1)];
            // Dutch national flag: [lo, lt) < pivot, [lt, i) == pivot, (gt, hi] > pivot.
            int lt = lo;
            int gt = hi;
            int i = lo;
            while (i <= gt)
            {
                final float v = a[i];
                if (v < pivot)
                {
                    a[i++] = a[lt];
                    a[lt++] = v;
                }
                else if (v > pivot)
                {
                    a[i] = a[gt];
                    a[gt--] = v;
                }
                else
                {
                    i++;
                }
            }
            if (rank < lt)
            {
                hi = lt - 1;
            }
            else if (rank > gt)
            {
                lo = gt + 1;
            }
            else
            {
                return pivot;
            }
        }
        return a[lo];
    }

    private long nextRandom()
    {
        seed += 0x9E37_79B9_7F4A_7C15L;
        long z = seed;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }
}
