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
 * threads doing the I/O that takes a few thousand operations here), then must not grow as a leak does. Netty's
 * adaptive pool may still take one more chunk late (which thread drives the I/O at a given moment, and so which
 * magazine serves a read buffer, depends on timing; seen once in a full build), so over the second 5,000 operations,
 * sampled in four intervals, it may step in one interval only, and by at most 12 MiB. A leak of even 1 KiB per
 * operation grows in every interval. (Surefire runs Netty's leak detector at PARANOID, which
 * tracks every buffer; .ci/run fails the build on any LEAK report.)
 */
@Timeout(300)
class DirectMemoryTest
{
    private static final int ITERATIONS = 10_000;
    /** Samples from the middle on: the pools warm up in the first half. */
    private static final int FIRST_SAMPLE = ITERATIONS / 2;
    private static final int SAMPLES = 5;
    private static final int SAMPLE_EVERY = (ITERATIONS - FIRST_SAMPLE) / (SAMPLES - 1);
    /** Growth in one interval below this is noise (a read buffer resized, a cache filled). */
    private static final long STEP_BYTES = 1L << 20;
    /** The most the pools may grow over the second half: one late chunk of Netty's adaptive pool, and a margin. */
    private static final long ALLOWED_GROWTH_BYTES = 12L << 20;

    @Test
    void directMemoryIsFlatOverTenThousandAllReduces() throws Exception
    {
        final int n = 2;
        final int port = TcpConformanceTest.freePort();
        final List<Communicator> comms = Ranks.run(n, 60, rank -> Hccl.init(TcpConformanceTest.config(rank, n, port)));
        try
        {
            final long[][] samples = new long[SAMPLES][2];
            Ranks.onEach(comms, 240, comm ->
            {
                final ByteBuffer small = ByteBuffer.allocateDirect(4096).order(ByteOrder.nativeOrder());
                final ByteBuffer large = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.nativeOrder());
                for (int i = 1; i <= ITERATIONS; i++)
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
                    if (i >= FIRST_SAMPLE && (i - FIRST_SAMPLE) % SAMPLE_EVERY == 0)
                    {
                        sample(comm, samples[(i - FIRST_SAMPLE) / SAMPLE_EVERY]);
                    }
                }
                return null;
            });
            final StringBuilder seen = new StringBuilder();
            for (int k = 0; k < SAMPLES; k++)
            {
                seen.append(k == 0 ? "" : ", ").append(FIRST_SAMPLE + k * SAMPLE_EVERY).append(": Netty ")
                    .append(samples[k][0]).append(", JDK ").append(samples[k][1]);
            }
            System.out.println("direct memory at operations " + seen);
            assertTrue(samples[0][1] > 0, "the JDK direct-buffer pool must see the buffers of this test");
            // A leak grows in every interval (even 1 KiB per operation is 1.25 MB per interval); a pool that takes
            // one more chunk late steps once. So: at most one interval may step, and not by much.
            for (int pool = 0; pool < 2; pool++)
            {
                int steps = 0;
                for (int k = 1; k < SAMPLES; k++)
                {
                    if (samples[k][pool] - samples[k - 1][pool] > STEP_BYTES)
                    {
                        steps++;
                    }
                }
                final String name = pool == 0 ? "Netty's direct memory" : "the JDK's direct buffers";
                assertTrue(steps <= 1, name + " grew in " + steps + " of " + (SAMPLES - 1) +
                    " intervals of the second half, as a leak does: " + seen);
                assertTrue(samples[SAMPLES - 1][pool] - samples[0][pool] <= ALLOWED_GROWTH_BYTES,
                    name + " grew by more than " + ALLOWED_GROWTH_BYTES + " bytes over the second half: " + seen);
            }
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
