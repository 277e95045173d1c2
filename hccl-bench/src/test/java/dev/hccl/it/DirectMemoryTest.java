package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import io.netty.util.internal.PlatformDependent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Off-heap memory stays flat over 10,000 operations on the TCP path: Netty's pooled buffers and the JDK's direct
 * buffers may grow while the pools warm up (each thread that drives the I/O warms its own share, and with the waiting
 * threads doing the I/O that takes a few thousand operations here), then must not: the second 5,000 operations may
 * not grow them. A leak of even 1 KiB per operation would grow them by 5 MB. (Surefire runs Netty's leak detector at PARANOID, which
 * tracks every buffer; .ci/run fails the build on any LEAK report.)
 */
@Timeout(300)
class DirectMemoryTest
{
    private static final int ITERATIONS = 10_000;
    private static final long ALLOWED_GROWTH_BYTES = 4L << 20;

    @Test
    void directMemoryIsFlatOverTenThousandAllReduces() throws Exception
    {
        final int n = 2;
        final int port = TcpConformanceTest.freePort();
        final List<Communicator> comms = Ranks.run(n, 60, rank -> Hccl.init(TcpConformanceTest.config(rank, n, port)));
        try
        {
            final long[] warm = new long[2];
            final long[] end = new long[2];
            Ranks.onEach(comms, 240, comm ->
            {
                final ByteBuffer small = ByteBuffer.allocateDirect(4096).order(ByteOrder.nativeOrder());
                final ByteBuffer large = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.nativeOrder());
                for (int i = 0; i < ITERATIONS; i++)
                {
                    // Mostly small (one-shot exchange), every 50th large (pipelined ring over many frames).
                    if (i % 50 == 0)
                    {
                        comm.allReduce(large, large, (1 << 20) / 4, DataType.FP32, ReduceOp.SUM);
                    }
                    else
                    {
                        comm.allReduce(small, small, 1024, DataType.FP32, ReduceOp.SUM);
                    }
                    if (i == ITERATIONS / 2)
                    {
                        sample(comm, warm);
                    }
                }
                sample(comm, end);
                return null;
            });
            System.out.println("direct memory at 5,000 / 10,000 operations: Netty " + warm[0] + " / " + end[0] +
                ", JDK direct buffers " + warm[1] + " / " + end[1]);
            assertTrue(warm[1] > 0, "the JDK direct-buffer pool must see the buffers of this test");
            final long nettyGrowth = end[0] - warm[0];
            final long jdkGrowth = end[1] - warm[1];
            assertTrue(nettyGrowth <= ALLOWED_GROWTH_BYTES, "Netty's direct memory grew by " + nettyGrowth +
                " bytes between operation 5,000 and 10,000 (from " + warm[0] + " to " + end[0] + ")");
            assertTrue(jdkGrowth <= ALLOWED_GROWTH_BYTES, "the JDK's direct buffers grew by " + jdkGrowth +
                " bytes between operation 5,000 and 10,000 (from " + warm[1] + " to " + end[1] + ")");
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    /**
     * Both ranks live in this JVM: rank 0 samples the process after a barrier, while no operation is in flight.
     */
    private static void sample(final Communicator comm, final long[] into)
    {
        comm.barrier();
        if (comm.rank() == 0)
        {
            into[0] = PlatformDependent.usedDirectMemory();
            into[1] = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(pool -> pool.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
        }
        comm.barrier();
    }
}
