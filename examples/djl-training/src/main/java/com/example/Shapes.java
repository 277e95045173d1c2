package com.example;

import java.util.SplittableRandom;

/**
 * A small image dataset that needs no download: 16 x 16 grey images of six shapes (filled square, hollow square,
 * disk, ring, plus, cross) of random size and place, on noise, drawn from a seed, so that every rank and every run
 * draws the same images.
 */
final class Shapes
{
    static final int SIDE = 16;
    static final int CLASSES = 6;
    static final String[] NAMES = {"square", "frame", "disk", "ring", "plus", "cross"};

    final float[] images;
    final float[] labels;
    final int count;

    private Shapes(final int count)
    {
        this.count = count;
        this.images = new float[count * SIDE * SIDE];
        this.labels = new float[count];
    }

    static Shapes generate(final int count, final long seed)
    {
        final Shapes shapes = new Shapes(count);
        final SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < count; i++)
        {
            final int label = random.nextInt(CLASSES);
            shapes.labels[i] = label;
            final int half = 2 + random.nextInt(3);              // 5 to 9 pixels across
            final int cx = half + random.nextInt(SIDE - 2 * half);
            final int cy = half + random.nextInt(SIDE - 2 * half);
            final int base = i * SIDE * SIDE;
            for (int y = 0; y < SIDE; y++)
            {
                for (int x = 0; x < SIDE; x++)
                {
                    final float ink = inside(label, x - cx, y - cy, half) ? 1f : 0f;
                    shapes.images[base + y * SIDE + x] = ink + (float)(0.3 * random.nextGaussian());
                }
            }
        }
        return shapes;
    }

    private static boolean inside(final int label, final int dx, final int dy, final int half)
    {
        final int ax = Math.abs(dx);
        final int ay = Math.abs(dy);
        final double r = Math.sqrt(dx * dx + dy * dy);
        switch (label)
        {
            case 0:
                return ax <= half && ay <= half;
            case 1:
                return Math.max(ax, ay) == half;
            case 2:
                return r <= half + 0.5;
            case 3:
                return Math.abs(r - half) <= 0.6;
            case 4:
                return (ax == 0 && ay <= half) || (ay == 0 && ax <= half);
            default:
                return ax == ay && ax <= half;
        }
    }
}
