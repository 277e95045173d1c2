package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A rank of a job that all-reduces forever: prints READY after its first all-reduce, and on failure prints FAILED with
 * the error, then CAUSE and each of its causes, and exits 3. The process tests kill one of these and watch the others.
 */
public final class AllReduceLoopWorker
{
    private AllReduceLoopWorker()
    {
    }

    /**
     * Runs the loop.
     *
     * @param args unused.
     */
    public static void main(final String[] args)
    {
        final int count = 1 << 20;
        try (Communicator comm = Hccl.init())
        {
            final ByteBuffer buf = ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder());
            for (long i = 0; ; i++)
            {
                comm.allReduce(buf, buf, count, DataType.FP32, ReduceOp.SUM);
                if (i == 0)
                {
                    System.out.println("READY");
                    System.out.flush();
                }
            }
        }
        catch (final HcclException ex)
        {
            System.out.println("FAILED " + ex.getMessage());
            for (Throwable cause = ex.getCause(); cause != null; cause = cause.getCause())
            {
                System.out.println("CAUSE " + cause);
            }
            System.out.flush();
            System.exit(3);
        }
    }
}
