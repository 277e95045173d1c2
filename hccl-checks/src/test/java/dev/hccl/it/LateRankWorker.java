package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Two all-reduces; before the second, rank {@code args[0]} sleeps {@code args[1]} milliseconds. Prints {@code OK} with
 * the sum checked, or {@code FAILED} and exits 3.
 */
public final class LateRankWorker
{
    private LateRankWorker()
    {
    }

    /**
     * @param args the late rank and how long it sleeps, in milliseconds.
     */
    public static void main(final String[] args)
    {
        final int late = Integer.parseInt(args[0]);
        final long sleepMillis = Long.parseLong(args[1]);
        try (Communicator comm = Hccl.init())
        {
            final ByteBuffer buf = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
            for (int i = 0; i < 2; i++)
            {
                if (i == 1 && comm.rank() == late)
                {
                    Thread.sleep(sleepMillis);
                }
                buf.putFloat(0, 1f);
                comm.allReduce(buf, buf, 1, DataType.FP32, ReduceOp.SUM);
                if (buf.getFloat(0) != comm.worldSize())
                {
                    throw new IllegalStateException("sum " + buf.getFloat(0));
                }
            }
            System.out.println("OK");
        }
        catch (final Throwable t)
        {
            System.out.println("FAILED " + t);
            System.exit(3);
        }
    }
}
