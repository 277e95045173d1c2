package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * An all-reduce, then, as the last operation before close(), a broadcast whose root each rank names differently:
 * {@code args[0]} is {@code self} (every rank its own root: each only sends) or {@code zero-or-one} (rank 0 says 0,
 * the others 1). Prints {@code CLOSE-OK} when close() returns, {@code CLOSE-FAILED <message>} when it throws, and
 * {@code OP-FAILED <message>} when an operation does.
 */
public final class RootDisagreementWorker
{
    private RootDisagreementWorker()
    {
    }

    /**
     * @param args how the ranks disagree.
     */
    public static void main(final String[] args)
    {
        final Communicator comm = Hccl.init();
        final ByteBuffer buf = ByteBuffer.allocateDirect(64 * 4).order(ByteOrder.nativeOrder());
        try
        {
            comm.allReduce(buf, buf, 64, DataType.FP32, ReduceOp.SUM);
            final int root = "self".equals(args[0]) ? comm.rank() : comm.rank() == 0 ? 0 : 1;
            comm.broadcast(buf, 64, DataType.FP32, root);
            System.out.println("BROADCAST-RETURNED");
        }
        catch (final HcclException ex)
        {
            System.out.println("OP-FAILED " + ex.getMessage());
        }
        try
        {
            comm.close();
            System.out.println("CLOSE-OK");
        }
        catch (final HcclException ex)
        {
            System.out.println("CLOSE-FAILED " + ex.getMessage());
        }
        System.out.flush();
    }
}
