package dev.hccl.transport.netty;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.BackoffWait;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Request;
import dev.hccl.api.spi.Tags;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transport with no I/O threads: the thread that waits performs the I/O, one thread drives at a time, and the
 * idle driver covers the gaps.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CallerDrivenEventLoopTest
{
    private static final OpDescriptor DESC =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 4);
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(20);

    private final Cluster cluster = new Cluster();
    private final RecordingInbound[] in = new RecordingInbound[2];

    @AfterEach
    void tearDown()
    {
        cluster.close();
    }

    private NettyTransport[] connected() throws Exception
    {
        final NettyTransport[] t = cluster.connected(in, ctx -> ctx.ioThreads(0).threadsPerPeer(1));
        assertNotNull(t[0].progressEngine(), "no I/O threads: the transport must offer its engine");
        return t;
    }

    @Test
    void theThreadThatWaitsPerformsTheReadThatCompletesItsMessage() throws Exception
    {
        final NettyTransport[] t = connected();
        final ProgressEngine receiver = t[0].progressEngine();
        assertTrue(receiver.enter(), "nobody else drives: the test thread must become the driver");
        try
        {
            final Request sent = Cluster.send(t[1], 0, 1, Tags.of(1, 0, 0), DESC, payload(16));
            assertTrue(sent.await(System.nanoTime() + WAIT_NANOS, t[1].progressEngine(), BackoffWait.forNode(1, 1)));
            assertNull(sent.failure());
            final long deadline = System.nanoTime() + WAIT_NANOS;
            while (in[0].messages.isEmpty() && System.nanoTime() < deadline)
            {
                receiver.poll(TimeUnit.MILLISECONDS.toNanos(1));
            }
            final RecordingInbound.Message m = in[0].nextMessage();
            assertEquals(Thread.currentThread().getName(), m.thread(),
                "the sink must run on the driving thread, not on a thread of the transport");
        }
        finally
        {
            receiver.exit();
        }
    }

    @Test
    void whenNobodyDrivesTheIdleDriverDeliversWithinMilliseconds() throws Exception
    {
        final NettyTransport[] t = connected();
        final Request sent = Cluster.send(t[1], 0, 1, Tags.of(1, 0, 0), DESC, payload(16));
        Cluster.awaitOk(sent);
        final RecordingInbound.Message m = in[0].nextMessage();
        assertTrue(m.thread().startsWith("hccl-io-0-idle"), "delivered on " + m.thread());
    }

    @Test
    void enterIsReentrantAndExclusive() throws Exception
    {
        final NettyTransport[] t = connected();
        final ProgressEngine engine = t[0].progressEngine();
        assertTrue(engine.enter());
        assertTrue(engine.enter(), "reentrant");
        engine.exit();
        final CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(engine::enter);
        assertFalse(other.get(10, TimeUnit.SECONDS), "a second caller must not drive while the first does");
        engine.exit();
        final CompletableFuture<Boolean> later = CompletableFuture.supplyAsync(() ->
        {
            final boolean entered = engine.enter();
            if (entered)
            {
                engine.exit();
            }
            return entered;
        });
        assertTrue(later.get(10, TimeUnit.SECONDS), "once the first has left, another caller drives");
    }

    @Test
    void pollOutsideEnterIsRefused() throws Exception
    {
        final NettyTransport[] t = connected();
        assertThrows(IllegalStateException.class, () -> t[0].progressEngine().poll(0));
    }

    @Test
    void aWaiterWhoseTransfersAnotherThreadDrivesIsCompletedByThatThread() throws Exception
    {
        final NettyTransport[] t = connected();
        final ProgressEngine engine = t[1].progressEngine();
        final CountDownLatch driving = new CountDownLatch(1);
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread driver = new Thread(() ->
        {
            assertTrue(engine.enter());
            driving.countDown();
            try
            {
                while (!stop.get())
                {
                    engine.poll(TimeUnit.MILLISECONDS.toNanos(1));
                }
            }
            finally
            {
                engine.exit();
            }
        }, "other-driver");
        driver.start();
        assertTrue(driving.await(10, TimeUnit.SECONDS));
        try
        {
            // This thread cannot drive: its send is written and completed by the other thread.
            final Request sent = Cluster.send(t[1], 0, 1, Tags.of(1, 0, 0), DESC, payload(1 << 20));
            assertTrue(sent.await(System.nanoTime() + WAIT_NANOS, engine, BackoffWait.forNode(1, 1)));
            assertNull(sent.failure());
            assertEquals(1 << 20, in[0].nextMessage().data().length);
        }
        finally
        {
            stop.set(true);
            driver.join(10_000);
        }
    }

    @Test
    void aCallerTakesTheLoopFromTheIdleDriverAsleepInTheKernel() throws Exception
    {
        final NettyTransport[] t = connected();
        final ProgressEngine engine = t[0].progressEngine();
        // Long enough for the idle driver to take the loop and block in epoll_wait.
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(CallerDrivenEventLoop.IDLE_TAKEOVER_NANOS) * 4);
        final long start = System.nanoTime();
        assertTrue(engine.enter(), "the idle driver must give way");
        engine.exit();
        final long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tookMs < TimeUnit.NANOSECONDS.toMillis(CallerDrivenEventLoop.IDLE_WAIT_NANOS),
            "the idle driver must be woken, not waited out: took " + tookMs + " ms");
    }

    @Test
    void closeStopsTheIdleDriver() throws Exception
    {
        final NettyTransport[] t = connected();
        t[0].close();
        final long deadline = System.nanoTime() + WAIT_NANOS;
        while (idleDriverAlive("hccl-io-0-idle") && System.nanoTime() < deadline)
        {
            Thread.sleep(10);
        }
        assertFalse(idleDriverAlive("hccl-io-0-idle"), "the idle driver must end with the transport");
        assertFalse(t[0].progressEngine().enter(), "a closed transport is driven by nobody");
    }

    private static boolean idleDriverAlive(final String name)
    {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(th -> th.getName().equals(name) && th.isAlive());
    }

    private static ByteBuffer payload(final int bytes)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(bytes);
        for (int i = 0; i < bytes; i++)
        {
            b.put(i, (byte)i);
        }
        return b;
    }
}
