package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import dev.hccl.transport.netty.TcpTransportProvider;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A blocking operation on an interrupted thread behaves as {@code CompletableFuture.join()} does: it completes, its
 * result is right, and the thread's interrupt status is still set when it returns, for the caller to act on. It
 * must not spin meanwhile: a thread whose interrupt status is set returns at once from every park and from a NIO
 * selector, so a wait that kept the status would burn its core until the peer came, taking it from the ranks that
 * would send the awaited data. Over real TCP, with the transport driven by its callers and by I/O threads.
 */
@Timeout(120)
class InterruptedCallerTest
{
    private static final int COUNT = 1 << 16;
    /** How long the other rank keeps the interrupted one waiting. */
    private static final long PEER_DELAY_MILLIS = 600;

    @ParameterizedTest(name = "io threads {0}")
    @ValueSource(ints = {0, 1})
    void anInterruptedCallerCompletesKeepsItsStatusAndDoesNotSpin(final int ioThreads) throws Exception
    {
        runWith(ioThreads, false);
    }

    @ParameterizedTest(name = "io threads {0}")
    @ValueSource(ints = {0, 1})
    void aCallerInterruptedWhileItWaitsCompletesKeepsItsStatusAndDoesNotSpin(final int ioThreads) throws Exception
    {
        runWith(ioThreads, true);
    }

    private static void runWith(final int ioThreads, final boolean interruptLater) throws Exception
    {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isCurrentThreadCpuTimeSupported() && threads.isThreadCpuTimeEnabled(),
            "this JVM does not measure a thread's CPU time");
        final int port = TcpConformanceTest.freePort();
        final List<Communicator> comms = Ranks.run(2, 60, rank -> Hccl.init(CommConfig.builder()
            .environment(Map.of()).rank(rank).worldSize(2).masterAddr("127.0.0.1").masterPort(port)
            .set(TcpTransportProvider.IO_THREADS, ioThreads)
            .connectTimeout(Duration.ofSeconds(30)).execTimeout(Duration.ofSeconds(30))
            .conclude()));
        final ScheduledExecutorService interrupter = Executors.newSingleThreadScheduledExecutor();
        try
        {
            // Both ranks have run one operation, so what follows is a wait, not a connection being made.
            Ranks.onEach(comms, 60, comm -> allReduce(comm));
            // Rank 1 starts its delay when rank 0 is about to call, so that rank 0 waits the whole delay.
            final CountDownLatch calling = new CountDownLatch(1);
            final List<double[]> figures = Ranks.onEach(comms, 60, comm ->
            {
                if (comm.rank() == 1)
                {
                    await(calling);
                    sleep(PEER_DELAY_MILLIS);
                    return new double[] {allReduce(comm), 0, 0, 0};
                }
                final Thread self = Thread.currentThread();
                if (interruptLater)
                {
                    interrupter.schedule(self::interrupt, PEER_DELAY_MILLIS / 4, TimeUnit.MILLISECONDS);
                }
                else
                {
                    self.interrupt();
                }
                final long cpuStart = threads.getCurrentThreadCpuTime();
                final long start = System.nanoTime();
                calling.countDown();
                final float value = allReduce(comm);
                final long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                final long wall = System.nanoTime() - start;
                final boolean stillInterrupted = Thread.interrupted();
                return new double[] {value, stillInterrupted ? 1 : 0, cpu, wall};
            });
            final double[] waiter = figures.get(0);
            assertEquals(3.0f, (float)waiter[0], "rank 0's result");
            assertEquals(3.0f, (float)figures.get(1)[0], "rank 1's result");
            assertEquals(1, waiter[1], "rank 0's interrupt status was cleared");
            assertTrue(waiter[3] >= PEER_DELAY_MILLIS * 1e6 * 0.9, "rank 0 did not wait: " + waiter[3] / 1e6 + " ms");
            // A spinning waiter uses about all of its wait; one that blocks, a few milliseconds of it.
            assertTrue(waiter[2] < waiter[3] / 3, String.format(
                "rank 0 used %.0f ms of CPU in a %.0f ms wait: it spun", waiter[2] / 1e6, waiter[3] / 1e6));
            // Still usable, and no interrupt left behind to disturb the next operation.
            assertEquals(List.of(3.0f, 3.0f), Ranks.onEach(comms, 60, comm -> allReduce(comm)));
        }
        finally
        {
            interrupter.shutdownNow();
            Ranks.closeAll(comms);
        }
    }

    /** Each rank contributes rank + 1; returns the first element of the sum. */
    private static float allReduce(final Communicator comm)
    {
        final ByteBuffer buffer = ByteBuffer.allocateDirect(COUNT * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < COUNT; i++)
        {
            buffer.putFloat(i * 4, comm.rank() + 1);
        }
        comm.allReduce(buffer, buffer, COUNT, DataType.FP32, ReduceOp.SUM);
        return buffer.getFloat((COUNT - 1) * 4);
    }

    private static void await(final CountDownLatch latch)
    {
        try
        {
            latch.await();
        }
        catch (final InterruptedException ex)
        {
            throw new AssertionError(ex);
        }
    }

    private static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            throw new AssertionError(ex);
        }
    }
}
