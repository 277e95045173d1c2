package dev.hccl.it;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two threads issuing on one communicator at once: their order is decided by a race, differently on each rank, so
 * equal-sized collectives would mix their data without an error. It must fail the communicator on every rank, naming
 * both threads; threads that agree on an order must keep working. Over TCP, ranks as threads of this JVM.
 */
@Timeout(300)
class ConcurrentIssueTest
{
    private static final int COUNT = 4096;

    private static List<Communicator> open(final int n) throws Exception
    {
        final int port = TcpConformanceTest.freePort();
        return Ranks.run(n, 120, rank -> Hccl.init(CommConfig.builder().environment(Map.of()).rank(rank)
            .worldSize(n).masterAddr("127.0.0.1").masterPort(port).connectTimeout(Duration.ofSeconds(30))
            .execTimeout(Duration.ofSeconds(60)).conclude()));
    }

    private static ByteBuffer filled(final float value)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(COUNT * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < COUNT; i++)
        {
            b.putFloat(i * 4, value);
        }
        return b;
    }

    /** How many elements differ from {@code expected}. */
    private static int wrong(final ByteBuffer b, final float expected)
    {
        int wrong = 0;
        for (int i = 0; i < COUNT; i++)
        {
            wrong += b.getFloat(i * 4) == expected ? 0 : 1;
        }
        return wrong;
    }

    /** Waits until {@code t} is inside a call of the communicator: issuing, it holds the lane until it returns. */
    private static void awaitInsideCommunicator(final Thread t) throws InterruptedException
    {
        Ranks.awaitFrame(t, "dev.hccl.core.op.OpIssuer", "collective");
    }

    @Test
    void aSecondThreadIssuingWhileTheFirstWaitsFailsEveryRankNamingBothThreads() throws Exception
    {
        final List<Communicator> comms = open(2);
        try
        {
            final Communicator zero = comms.get(0);
            final Communicator one = comms.get(1);
            final AtomicReference<Throwable> first = new AtomicReference<>();
            final ByteBuffer a = filled(1);
            // Thread A's all-reduce cannot complete: rank 1 has issued nothing yet.
            final Thread threadA = new Thread(() ->
            {
                try
                {
                    zero.allReduce(a, a, COUNT, DataType.FP32, ReduceOp.SUM);
                }
                catch (final Throwable ex)
                {
                    first.set(ex);
                }
            }, "trainer-A");
            threadA.start();
            awaitInsideCommunicator(threadA);
            final ByteBuffer b = filled(2);
            final Throwable second = catchThrowable(() -> zero.allReduce(b, b, COUNT, DataType.FP32, ReduceOp.SUM));
            threadA.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(!threadA.isAlive(), "thread A still waits");

            assertTrue(second instanceof HcclException, "the second thread's call: " + second);
            final HcclException race = (HcclException)second;
            assertEquals(ErrorCode.E_CONCURRENT, race.errorCode(), race.getMessage());
            assertTrue(race.getMessage().contains("\"trainer-A\"") &&
                race.getMessage().contains("\"" + Thread.currentThread().getName() + "\""),
                "names both threads: " + race.getMessage());
            assertTrue(race.getMessage().contains("allReduce(count=4096, FP32, SUM)"), race.getMessage());

            assertTrue(first.get() instanceof HcclException, "the first thread's call: " + first.get());
            assertEquals(ErrorCode.E_CONCURRENT, ((HcclException)first.get()).errorCode(), first.get().getMessage());

            // Rank 1 learns of it on its first operation, which fails instead of returning what thread A's half-run
            // operation sent it (its output is then undefined, as for any failed operation).
            final ByteBuffer c = filled(3);
            final Throwable remote = catchThrowable(() -> one.allReduce(c, c, COUNT, DataType.FP32, ReduceOp.SUM));
            assertTrue(remote instanceof HcclException, "rank 1: " + remote);
            assertEquals(ErrorCode.E_REMOTE, ((HcclException)remote).errorCode(), remote.getMessage());
            assertTrue(remote.getMessage().contains("\"trainer-A\""), "rank 1 hears why: " + remote.getMessage());
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void twoThreadsEachRunningBlockingAllReducesNeverCompleteSilently() throws Exception
    {
        // The report: two threads each run 300 blocking all-reduces of 4,096 floats at np = 2, and got hundreds of
        // wrong results without an exception. Every thread of every rank must now stop with an exception.
        final int n = 2;
        final List<Communicator> comms = open(n);
        final int threadsPerRank = 2;
        final int iterations = 300;
        final CyclicBarrier start = new CyclicBarrier(n * threadsPerRank);
        final AtomicInteger wrongResults = new AtomicInteger();
        final List<Throwable> outcomes = new ArrayList<>();
        final List<Thread> threads = new ArrayList<>();
        final CountDownLatch done = new CountDownLatch(n * threadsPerRank);
        try
        {
            for (int r = 0; r < n; r++)
            {
                // The threads of a rank start each iteration together, so that their calls overlap on some iteration
                // even when the machine is so loaded that one thread could otherwise run all of its own first.
                final CyclicBarrier pair = new CyclicBarrier(threadsPerRank);
                final AtomicBoolean partnerStopped = new AtomicBoolean();
                for (int t = 0; t < threadsPerRank; t++)
                {
                    final Communicator comm = comms.get(r);
                    final int slot = outcomes.size();
                    final float value = 1 + t; // thread t of every rank contributes t + 1
                    outcomes.add(null);
                    threads.add(new Thread(() ->
                    {
                        try
                        {
                            start.await();
                            for (int i = 0; i < iterations; i++)
                            {
                                if (!partnerStopped.get())
                                {
                                    awaitPartner(pair);
                                }
                                final ByteBuffer buf = filled(value);
                                comm.allReduce(buf, buf, COUNT, DataType.FP32, ReduceOp.SUM);
                                if (wrong(buf, value * n) > 0)
                                {
                                    wrongResults.incrementAndGet();
                                }
                            }
                        }
                        catch (final Throwable ex)
                        {
                            synchronized (outcomes)
                            {
                                outcomes.set(slot, ex);
                            }
                        }
                        finally
                        {
                            partnerStopped.set(true);
                            pair.reset(); // a partner still waiting goes on, to find the communicator failed
                            done.countDown();
                        }
                    }, "rank" + r + "-thread" + t));
                }
            }
            threads.forEach(Thread::start);
            assertTrue(done.await(120, TimeUnit.SECONDS), "threads still running");
        }
        finally
        {
            Ranks.closeAll(comms);
        }
        synchronized (outcomes)
        {
            for (int i = 0; i < outcomes.size(); i++)
            {
                final Throwable ex = outcomes.get(i);
                assertTrue(ex instanceof HcclException, threads.get(i).getName() + " ended with " + ex +
                    " after " + wrongResults.get() + " wrong results in all");
                final ErrorCode code = ((HcclException)ex).errorCode();
                assertTrue(code == ErrorCode.E_CONCURRENT || code == ErrorCode.E_REMOTE, ex.getMessage());
            }
            assertTrue(outcomes.stream().anyMatch(ex -> ((HcclException)ex).errorCode() == ErrorCode.E_CONCURRENT &&
                (ex.getMessage().contains("\"rank0-thread") || ex.getMessage().contains("\"rank1-thread"))),
                outcomes.toString());
        }
    }

    @Test
    void threadsThatTakeTurnsKeepWorking() throws Exception
    {
        // Two threads per rank hand the communicator to each other after each blocking call: an agreed order.
        final int n = 2;
        final List<Communicator> comms = open(n);
        try
        {
            Ranks.onEach(comms, 120, comm ->
            {
                final Object turn = new Object();
                final int[] next = {0};
                final AtomicReference<Throwable> failed = new AtomicReference<>();
                final List<Thread> threads = new ArrayList<>();
                for (int t = 0; t < 2; t++)
                {
                    final int me = t;
                    threads.add(new Thread(() ->
                    {
                        try
                        {
                            for (int i = 0; i < 50; i++)
                            {
                                synchronized (turn)
                                {
                                    while (next[0] != me)
                                    {
                                        turn.wait();
                                    }
                                }
                                final ByteBuffer buf = filled(1 + me);
                                comm.allReduce(buf, buf, COUNT, DataType.FP32, ReduceOp.SUM);
                                assertEquals(0, wrong(buf, (1 + me) * n));
                                synchronized (turn)
                                {
                                    next[0] = 1 - me;
                                    turn.notifyAll();
                                }
                            }
                        }
                        catch (final Throwable ex)
                        {
                            failed.compareAndSet(null, ex);
                            synchronized (turn)
                            {
                                next[0] = -1;
                                turn.notifyAll();
                            }
                        }
                    }, "turn-" + t));
                }
                threads.forEach(Thread::start);
                for (final Thread t : threads)
                {
                    try
                    {
                        t.join(TimeUnit.SECONDS.toMillis(100));
                    }
                    catch (final InterruptedException ex)
                    {
                        throw new AssertionError(ex);
                    }
                }
                assertNull(failed.get());
                return null;
            });
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    @Test
    void aFutureIssuedOnOneThreadMayBeJoinedOnAnother() throws Exception
    {
        final List<Communicator> comms = open(2);
        try
        {
            Ranks.onEach(comms, 120, comm ->
            {
                final ByteBuffer buf = filled(5);
                final var future = comm.allReduceAsync(buf, buf, COUNT, DataType.FP32, ReduceOp.SUM);
                final AtomicReference<Throwable> failed = new AtomicReference<>();
                final Thread waiter = new Thread(() ->
                {
                    try
                    {
                        future.join();
                    }
                    catch (final Throwable ex)
                    {
                        failed.set(ex);
                    }
                });
                waiter.start();
                try
                {
                    waiter.join(TimeUnit.SECONDS.toMillis(60));
                }
                catch (final InterruptedException ex)
                {
                    throw new AssertionError(ex);
                }
                assertNull(failed.get());
                assertEquals(0, wrong(buf, 10));
                comm.barrier(); // issued after the other thread completed the future: still usable
                return null;
            });
        }
        finally
        {
            Ranks.closeAll(comms);
        }
    }

    /** Waits for the other thread of this rank, unless it has stopped. */
    private static void awaitPartner(final CyclicBarrier pair) throws InterruptedException
    {
        try
        {
            pair.await(10, TimeUnit.SECONDS);
        }
        catch (final java.util.concurrent.BrokenBarrierException | java.util.concurrent.TimeoutException ex)
        {
            // the partner stopped: go on alone
        }
    }

    private static Throwable catchThrowable(final Runnable call)
    {
        try
        {
            call.run();
            return null;
        }
        catch (final Throwable ex)
        {
            assertNotNull(ex);
            return ex;
        }
    }
}
