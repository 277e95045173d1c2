package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Splits the job by the parity of the rank (ranks 0, 2, ... in one communicator, the odd ones in another), runs an
 * all-reduce of 64 KiB in the split communicator and two in the job's, before the second of which rank
 * {@code args[0]} sleeps {@code args[1]} milliseconds. Prints {@code OK} with the sums checked, or {@code FAILED} and
 * exits 3.
 */
public final class SplitLateRankWorker
{
    private static final int COUNT = 16 * 1024;

    private SplitLateRankWorker()
    {
    }

    /**
     * @param args the late rank and how long it sleeps, in milliseconds.
     */
    public static void main(final String[] args)
    {
        final int late = Integer.parseInt(args[0]);
        final long sleepMillis = Long.parseLong(args[1]);
        try (Communicator comm = Hccl.init();
            Communicator half = comm.split(comm.rank() % 2, comm.rank()))
        {
            final ByteBuffer buf = ByteBuffer.allocateDirect(4 * COUNT).order(ByteOrder.nativeOrder());
            allReduceOnes(half, buf);
            for (int i = 0; i < 2; i++)
            {
                if (i == 1 && comm.rank() == late)
                {
                    Thread.sleep(sleepMillis);
                }
                allReduceOnes(comm, buf);
            }
            System.out.println("OK");
        }
        catch (final Throwable t)
        {
            System.out.println("FAILED " + t);
            System.exit(3);
        }
    }

    private static void allReduceOnes(final Communicator comm, final ByteBuffer buf)
    {
        for (int i = 0; i < COUNT; i++)
        {
            buf.putFloat(4 * i, 1f);
        }
        comm.allReduce(buf, buf, COUNT, DataType.FP32, ReduceOp.SUM);
        for (int i = 0; i < COUNT; i++)
        {
            if (buf.getFloat(4 * i) != comm.worldSize())
            {
                throw new IllegalStateException("element " + i + ": sum " + buf.getFloat(4 * i) + " in a communicator"
                    + " of " + comm.worldSize());
            }
        }
    }
}
