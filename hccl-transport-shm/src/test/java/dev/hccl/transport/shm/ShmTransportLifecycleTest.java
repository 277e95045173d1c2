package dev.hccl.transport.shm;

import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.OpDescriptor;
import dev.hccl.api.spi.ProgressEngine;
import dev.hccl.api.spi.Request;
import dev.hccl.api.testing.RecordingInbound;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Ends of a link: what a dead peer wrote before it died, a GOODBYE just before an exit, and closing while other
 * threads use the memory.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmTransportLifecycleTest
{
    private static final OpDescriptor ALL_REDUCE =
        new OpDescriptor(Operation.ALL_REDUCE, DataType.FP32, ReduceOp.SUM, OpDescriptor.NO_ROOT, 1000);

    private final ShmCluster cluster;
    private final RecordingInbound[] in = new RecordingInbound[2];
    private final List<Process> children = new ArrayList<>();

    ShmTransportLifecycleTest() throws IOException
    {
        cluster = new ShmCluster();
    }

    @AfterEach
    void tearDown() throws IOException
    {
        children.forEach(Process::destroyForcibly);
        cluster.close();
        for (final RecordingInbound i : in)
        {
            if (null != i)
            {
                assertTrue(i.errors.isEmpty(), i.errors::toString);
            }
        }
    }

    /** Rank 0's transports, seeing rank 1 as a child process that the test kills. */
    private ShmTransport[] connectedWithMortalRankOne() throws Exception
    {
        final Process child = new ProcessBuilder("sleep", "60").start();
        children.add(child);
        final ShmTransport t0 = cluster.open(0, 2, in[0] = new RecordingInbound());
        final ShmTransport t1 = cluster.open(1, 2, in[1] = new RecordingInbound());
        cluster.connectSeeingRankOneAs(t0, t1, child);
        return new ShmTransport[] {t0, t1};
    }

    private void killRankOne() throws InterruptedException
    {
        children.get(0).destroyForcibly().waitFor();
    }

    /**
     * The messages a peer completed before it died reach the communicator before its death does, even when the
     * watch notices the death first and they take more than one poll to read.
     */
    @Test
    void messagesWrittenBeforeADeathAreDeliveredBeforeTheFailure() throws Exception
    {
        final ShmTransport[] t = connectedWithMortalRankOne();
        final ProgressEngine e0 = t[0].progressEngine();
        final List<String> expected = new ArrayList<>();
        enter(e0);
        try
        {
            // This thread holds rank 0's engine without polling: the watch notices the death but reads nothing.
            sendMessagesFromRankOne(t, expected);
            killRankOne();
            Thread.sleep(400);
            assertTrue(in[0].events.isEmpty(), "delivered without a driver: " + in[0].events);
            pollUntil(e0, () -> !in[0].failures.isEmpty());
        }
        finally
        {
            e0.exit();
        }
        expected.add("failed 1");
        assertEquals(expected, new ArrayList<>(in[0].events));
    }

    /** More messages than one poll reads, each of which fits in the ring at once. */
    private static void sendMessagesFromRankOne(final ShmTransport[] t, final List<String> events)
    {
        for (int i = 0; i < 3 * ShmProgress.READ_LIMIT; i++)
        {
            final Request r = ShmCluster.send(t[1], 0, i, 0, ALL_REDUCE, ByteBuffer.allocate(100));
            ShmCluster.assertOk(r);
            events.add("msg 1 " + i);
        }
    }

    /** A peer that says GOODBYE and exits at once has closed in good order, whichever rank 0 notices first. */
    @Test
    void aGoodbyeJustBeforeAnExitIsAnOrderlyClose() throws Exception
    {
        final ShmTransport[] t = connectedWithMortalRankOne();
        final ProgressEngine e0 = t[0].progressEngine();
        final List<String> expected = new ArrayList<>();
        enter(e0);
        try
        {
            sendMessagesFromRankOne(t, expected);
            t[1].close();
            killRankOne();
            Thread.sleep(400);
            pollUntil(e0, () -> !in[0].peerClosed.isEmpty());
            final long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            while (System.nanoTime() - until < 0)
            {
                e0.poll(0);
            }
        }
        finally
        {
            e0.exit();
        }
        Thread.sleep(300);
        expected.add("closed 1");
        assertEquals(expected, new ArrayList<>(in[0].events));
    }

    /**
     * A thread that drives while it waits (for a receive that never comes) does not keep close from releasing the
     * memory, and polls on safely afterwards.
     */
    @Test
    void closeReleasesTheMemoryWhileAnotherThreadDrivesAndThatThreadGoesOnSafely() throws Exception
    {
        final ShmTransport[] t = cluster.connected(in);
        final CountDownLatch driving = new CountDownLatch(1);
        final Future<Integer> driver = cluster.async(() ->
        {
            final ProgressEngine e = t[0].progressEngine();
            enter(e);
            int polls = 0;
            try
            {
                driving.countDown();
                final long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                while (System.nanoTime() - until < 0)
                {
                    e.poll(0);
                    polls++;
                }
            }
            finally
            {
                e.exit();
            }
            return polls;
        });
        assertTrue(driving.await(10, TimeUnit.SECONDS));
        Thread.sleep(50);
        final long start = System.nanoTime();
        t[0].close();
        final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(ms < 1000, "close waited " + ms + " ms for the driving thread");
        assertTrue(t[0].memoryReleasedForTest(), "close left the memory mapped");
        assertTrue(driver.get(10, TimeUnit.SECONDS) > 0);
        assertFalse(t[0].progressEngine().enter(), "a closed engine must not be entered");
    }

    /**
     * close() from an Inbound callback, in the middle of a poll on a caller's thread, leaves the memory mapped: the
     * poll goes on reading the message's payload from it.
     */
    @Test
    void closeFromACallbackLeavesTheMemoryMapped() throws Exception
    {
        final ShmTransport[] t = cluster.connected(in);
        final String me = Thread.currentThread().getName();
        in[1].onMessageHook = t[1]::close;
        final ProgressEngine e1 = t[1].progressEngine();
        enter(e1);
        try
        {
            // Written whole at once, read by this thread: the callback closes on the driving thread.
            final Request r = ShmCluster.send(t[0], 1, 1, 0, ALL_REDUCE, ByteBuffer.allocate(100_000));
            ShmCluster.assertOk(r);
            pollUntil(e1, () -> !in[1].messages.isEmpty());
        }
        finally
        {
            e1.exit();
        }
        final RecordingInbound.Message m = in[1].nextMessage();
        assertEquals(me, m.thread());
        assertEquals(100_000, m.data().length);
        assertFalse(t[1].memoryReleasedForTest(), "unmapped under a poll that was still reading");
        ShmCluster.drive(t[0], () -> !in[0].peerClosed.isEmpty());
    }

    private static void enter(final ProgressEngine e)
    {
        final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!e.enter())
        {
            if (System.nanoTime() - until >= 0)
            {
                fail("could not enter the engine");
            }
            Thread.onSpinWait();
        }
    }

    private static void pollUntil(final ProgressEngine e, final BooleanSupplier until)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!until.getAsBoolean())
        {
            if (System.nanoTime() - deadline >= 0)
            {
                fail("the condition did not come true within 10 s of polling");
            }
            e.poll(0);
        }
    }
}
