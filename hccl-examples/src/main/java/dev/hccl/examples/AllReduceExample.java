package dev.hccl.examples;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The first program a user runs: every rank contributes {@code rank + 1} in each of a million floats, all-reduces
 * them, and checks that every element is {@code n(n+1)/2}. Start it with {@code bin/hcclrun -np 4 bin/hccl-java
 * dev.hccl.examples.AllReduceExample}.
 */
public final class AllReduceExample
{
    private AllReduceExample()
    {
    }

    /**
     * Runs the example.
     *
     * @param args optional element count (default 1,048,576).
     */
    public static void main(final String[] args)
    {
        final int count = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 20;
        try (Communicator comm = Hccl.init())
        {
            final int rank = comm.rank();
            final int n = comm.worldSize();
            final ByteBuffer grads = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
            for (int i = 0; i < count; i++)
            {
                grads.putFloat(i * 4, rank + 1);
            }
            final long start = System.nanoTime();
            comm.allReduce(grads, grads, count, DataType.FP32, ReduceOp.SUM); // in place
            final double millis = (System.nanoTime() - start) / 1e6;

            final float expected = n * (n + 1) / 2.0f;
            int wrong = 0;
            for (int i = 0; i < count; i++)
            {
                if (grads.getFloat(i * 4) != expected)
                {
                    wrong++;
                }
            }
            comm.barrier();
            System.out.printf("rank %d of %d (local rank %d of %d): allReduce SUM of %,d floats in %.1f ms: " +
                "every element = %.1f, expected %.1f: %s%n", rank, n, comm.localRank(), comm.localSize(), count,
                millis, grads.getFloat(0), expected, wrong == 0 ? "OK" : wrong + " WRONG");
            if (wrong != 0)
            {
                System.exit(1);
            }
        }
    }
}
