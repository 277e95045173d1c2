package com.example;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Data-parallel training in miniature: each rank computes gradients on its shard, all-reduce averages them. */
public final class Train
{
    public static void main(final String[] args)
    {
        final int params = 1 << 20;
        try (Communicator comm = Hccl.init()) // RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the launcher
        {
            final ByteBuffer grads = ByteBuffer.allocateDirect(params * 4).order(ByteOrder.nativeOrder());
            for (int step = 0; step < 3; step++)
            {
                for (int i = 0; i < params; i++)
                {
                    grads.putFloat(i * 4, comm.rank() + step); // this rank's "gradient"
                }
                comm.allReduce(grads, grads, params, DataType.FP32, ReduceOp.AVG);
                final float expected = (comm.worldSize() - 1) / 2.0f + step;
                if (comm.rank() == 0)
                {
                    System.out.printf("step %d: mean gradient %.2f (expected %.2f) over %d ranks%n", step,
                        grads.getFloat(0), expected, comm.worldSize());
                }
            }
        }
    }
}
