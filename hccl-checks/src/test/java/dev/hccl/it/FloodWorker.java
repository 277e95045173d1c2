package dev.hccl.it;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Two ranks: rank 1 sends {@code MESSAGES} messages of 20 MiB to rank 0 asynchronously, which receives none of them
 * until both have said, over a second communicator, what they see: the sender how many sends completed, the receiver
 * how much heap it holds. Then rank 0 receives and checks every element. Prints {@code SENDS-DONE n},
 * {@code HEAP-USED-MIB n} and {@code OK}; exits 3 on any error.
 */
public final class FloodWorker
{
    static final int MESSAGES = 100;
    private static final int FLOATS = 5 * 1024 * 1024;

    private FloodWorker()
    {
    }

    /**
     * @param args unused.
     */
    public static void main(final String[] args)
    {
        try (Communicator comm = Hccl.init(); Communicator side = comm.split(0, comm.rank()))
        {
            final ByteBuffer buf = ByteBuffer.allocateDirect(FLOATS * 4).order(ByteOrder.nativeOrder());
            if (comm.rank() == 1)
            {
                for (int i = 0; i < FLOATS; i++)
                {
                    buf.putFloat(4 * i, i);
                }
                final List<CommFuture> sends = new ArrayList<>();
                for (int m = 0; m < MESSAGES; m++)
                {
                    sends.add(comm.sendAsync(buf, FLOATS, DataType.FP32, 0));
                }
                Thread.sleep(3000);
                System.out.println("SENDS-DONE " + sends.stream().filter(CommFuture::isDone).count());
                side.barrier();
                sends.forEach(CommFuture::join);
            }
            else
            {
                Thread.sleep(3000);
                System.gc();
                final Runtime rt = Runtime.getRuntime();
                System.out.println("HEAP-USED-MIB " + (rt.totalMemory() - rt.freeMemory()) / (1024 * 1024));
                side.barrier();
                for (int m = 0; m < MESSAGES; m++)
                {
                    comm.recv(buf, FLOATS, DataType.FP32, 1);
                    for (int i = 0; i < FLOATS; i++)
                    {
                        if (buf.getFloat(4 * i) != i)
                        {
                            throw new IllegalStateException("message " + m + " element " + i + " = " +
                                buf.getFloat(4 * i));
                        }
                    }
                }
            }
            System.out.println("OK");
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
