package dev.hccl.bench.step;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** Allocates a model's gradients on this rank, as a framework does: one direct FP32 buffer per parameter tensor. */
final class GradientBuffers
{
    private GradientBuffers()
    {
    }

    /**
     * @param model the model.
     * @param rank  this rank, which seeds the values.
     * @return one native-order direct buffer per gradient, in registration order, filled with values in [-1, 1).
     */
    static List<ByteBuffer> allocate(final ModelGradients model, final int rank)
    {
        final SplittableRandom random = new SplittableRandom(rank * 7919L + 17);
        final List<ByteBuffer> gradients = new ArrayList<>(model.tensorCount());
        for (final long elements : model.elementCounts())
        {
            final ByteBuffer b = ByteBuffer.allocateDirect(Math.toIntExact(elements * Float.BYTES))
                .order(ByteOrder.nativeOrder());
            final FloatBuffer values = b.asFloatBuffer();
            for (int i = 0; i < elements; i++)
            {
                values.put(i, (float)(random.nextDouble() * 2 - 1));
            }
            gradients.add(b);
        }
        return gradients;
    }
}
