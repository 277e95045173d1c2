package com.example;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.training.GradientSync;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Data-parallel training in miniature: each rank computes gradients on its shard, GradientSync averages them, in
 * buckets that start while the backward pass is still running.
 */
public final class Train
{
    public static void main(final String[] args)
    {
        final long[] layerSizes = {1 << 20, 4096, 1000, 10}; // a model's gradient tensors, in forward order
        try (Communicator comm = Hccl.init(); // RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the launcher
             GradientSync sync = GradientSync.builder(comm).buildViews(layerSizes, DataType.FP32))
        {
            final List<ByteBuffer> grads = sync.gradients(); // direct, native order: the backward pass writes here
            for (int step = 0; step < 3; step++)
            {
                for (int layer = grads.size() - 1; layer >= 0; layer--) // backward: last layer first
                {
                    final ByteBuffer g = grads.get(layer);
                    for (int i = 0; i < g.capacity() / 4; i++)
                    {
                        g.putFloat(i * 4, comm.rank() + step); // this rank's "gradient"
                    }
                    sync.markReady(layer); // its bucket's all-reduce may start now
                }
                sync.await(); // every gradient now holds the mean over the ranks
                final float expected = (comm.worldSize() - 1) / 2.0f + step;
                if (comm.rank() == 0)
                {
                    System.out.printf("step %d: mean gradient %.2f (expected %.2f) over %d ranks, %d buckets%n",
                        step, grads.get(0).getFloat(0), expected, comm.worldSize(), sync.bucketCount());
                }
            }
        }
    }
}
