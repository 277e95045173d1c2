package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Data-parallel training in miniature: all-reduces of each rank's (rank + 1) in every element, forever, until a rank
 * dies; then the survivors shrink the communicator to themselves and run {@code STEPS} more all-reduces, checking every
 * element against the survivors' sum. Prints READY after the first step, {@code LOST [ranks]} on the failure and
 * {@code SHRUNK-OK sum=S} at the end; exits 3 on anything else.
 */
public final class ShrinkWorker
{
    static final int STEPS = 20;
    private static final int COUNT = 64 * 1024;

    private ShrinkWorker()
    {
    }

    /**
     * @param args unused.
     */
    public static void main(final String[] args)
    {
        final Communicator comm = Hccl.init();
        final int original = comm.rank();
        final ByteBuffer buf = ByteBuffer.allocateDirect(COUNT * 4).order(ByteOrder.nativeOrder());
        try
        {
            for (long step = 0; ; step++)
            {
                fill(buf, original + 1);
                comm.allReduce(buf, buf, COUNT, DataType.FP32, ReduceOp.SUM);
                if (step == 0)
                {
                    System.out.println("READY");
                    System.out.flush();
                }
            }
        }
        catch (final HcclException failure)
        {
            try
            {
                int[] lost = comm.lostRanks();
                for (int i = 0; i < 200 && lost.length == 0; i++)
                {
                    Thread.sleep(50); // the failure may come as a peer's abort before this rank's own link says so
                    lost = comm.lostRanks();
                }
                System.out.println("LOST " + Arrays.toString(lost) + " after " + failure.getMessage());
                try (Communicator survivors = comm.shrink(lost))
                {
                    // Every survivor contributes its original rank + 1: the sum is the survivors' alone.
                    final float[] mine = {original + 1};
                    final float[] all = new float[survivors.worldSize()];
                    final ByteBuffer one = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder());
                    final ByteBuffer gathered = ByteBuffer.allocateDirect(4 * all.length).order(ByteOrder.nativeOrder());
                    one.putFloat(0, mine[0]);
                    survivors.allGather(one, gathered, 1, DataType.FP32);
                    float expected = 0;
                    for (int i = 0; i < all.length; i++)
                    {
                        expected += gathered.getFloat(4 * i);
                    }
                    for (int step = 0; step < STEPS; step++)
                    {
                        fill(buf, original + 1);
                        survivors.allReduce(buf, buf, COUNT, DataType.FP32, ReduceOp.SUM);
                        for (int i = 0; i < COUNT; i++)
                        {
                            if (buf.getFloat(4 * i) != expected)
                            {
                                throw new IllegalStateException("step " + step + " element " + i + " = " +
                                    buf.getFloat(4 * i) + ", expected " + expected);
                            }
                        }
                    }
                    System.out.println("SHRUNK-OK sum=" + expected + " ranks=" + survivors.worldSize());
                }
                try
                {
                    comm.close();
                }
                catch (final HcclException ignore)
                {
                    // the failed parent says why again
                }
                System.out.flush();
                System.exit(0);
            }
            catch (final Throwable t)
            {
                System.out.println("FAILED " + t);
                t.printStackTrace(System.out);
                System.out.flush();
                System.exit(3);
            }
        }
    }

    private static void fill(final ByteBuffer buf, final float value)
    {
        for (int i = 0; i < COUNT; i++)
        {
            buf.putFloat(4 * i, value);
        }
    }
}
