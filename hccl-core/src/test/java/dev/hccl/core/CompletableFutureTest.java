package dev.hccl.core;

import dev.hccl.api.CommConfig;
import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CommFuture#toCompletableFuture()}: operations chained and combined with the JDK's tools. Two ranks as threads
 * of this JVM over shared memory (root info), so that a send or a receive is driven only by whoever waits for it.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class CompletableFutureTest
{
    private final ExecutorService ranks = Executors.newFixedThreadPool(2);
    private final List<Communicator> comms = new ArrayList<>();

    @BeforeEach
    void connect() throws Exception
    {
        final String root = Hccl.getRootInfo(CommConfig.builder().environment(Map.of()).masterAddr("127.0.0.1")
            .conclude());
        final List<Future<Communicator>> made = new ArrayList<>();
        for (int r = 0; r < 2; r++)
        {
            final int rank = r;
            made.add(ranks.submit(() -> Hccl.init(CommConfig.builder().environment(Map.of()).rootInfo(root).rank(rank)
                .worldSize(2).connectTimeout(Duration.ofSeconds(30)).conclude())));
        }
        for (final Future<Communicator> f : made)
        {
            comms.add(f.get());
        }
    }

    @AfterEach
    void close() throws Exception
    {
        // Both at once: each close waits for the other's record. A test that aborted a rank made them fail.
        onBoth(c ->
        {
            try
            {
                c.close();
            }
            catch (final HcclException ex)
            {
                assertTrue(c.lostRanks().length > 0 || ex.errorCode() == ErrorCode.E_UNAVAIL ||
                    ex.errorCode() == ErrorCode.E_REMOTE, ex.getMessage());
            }
            return null;
        });
        ranks.shutdownNow();
    }

    /** Runs {@code body} on both ranks at once, one thread each, and returns what each returned. */
    private <T> List<T> onBoth(final Function<Communicator, T> body) throws Exception
    {
        final List<Future<T>> runs = new ArrayList<>();
        for (final Communicator c : comms)
        {
            runs.add(ranks.submit(() -> body.apply(c)));
        }
        final List<T> out = new ArrayList<>();
        for (final Future<T> f : runs)
        {
            out.add(f.get(60, TimeUnit.SECONDS));
        }
        return out;
    }

    private static ByteBuffer floats(final float... values)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(values.length * Float.BYTES).order(ByteOrder.nativeOrder());
        for (int i = 0; i < values.length; i++)
        {
            b.putFloat(i * Float.BYTES, values[i]);
        }
        return b;
    }

    @Test
    void completesWithTheOperationAndChainsAnother() throws Exception
    {
        final List<String> out = onBoth(comm ->
        {
            final ByteBuffer b = floats(comm.rank() + 1);
            final CompletableFuture<Void> first = comm.allReduceAsync(b, b, 1, DataType.FP32, ReduceOp.SUM)
                .toCompletableFuture();
            // A dependent action that issues and waits for another collective: it must not run on the stream.
            final String thread = first.thenApply(done ->
            {
                comm.allReduce(b, b, 1, DataType.FP32, ReduceOp.SUM);
                return Thread.currentThread().getName();
            }).join();
            return b.getFloat(0) + " on " + thread;
        });
        for (final String s : out)
        {
            assertTrue(s.startsWith("6.0 on "), s); // (1 + 2) * 2
            assertFalse(s.contains("hccl-stream"), "ran on the communicator's execution stream: " + s);
        }
    }

    /**
     * The JDK's default executor for a future's dependents is, on newer JDKs, the common pool even where it has a
     * single worker (two cores): the two ranks' dependents, each issuing a collective the other's must join, would
     * wait there for each other, as would any dependent behind an application's tasks. With every worker of the
     * common pool held, the chain of {@link #completesWithTheOperationAndChainsAnother} must still complete.
     */
    @Test
    void operationsChainWhileTheCommonPoolIsBusy() throws Exception
    {
        final int workers = ForkJoinPool.getCommonPoolParallelism();
        final CountDownLatch held = new CountDownLatch(workers);
        final AtomicBoolean release = new AtomicBoolean();
        for (int w = 0; w < workers; w++)
        {
            ForkJoinPool.commonPool().execute(() ->
            {
                held.countDown();
                while (!release.get())
                {
                    LockSupport.parkNanos(1_000_000); // not a managed block: the pool adds no worker for it
                }
            });
        }
        try
        {
            assertTrue(held.await(30, TimeUnit.SECONDS), "the common pool's workers did not all start");
            final List<Float> out = onBoth(comm ->
            {
                final ByteBuffer b = floats(comm.rank() + 1);
                comm.allReduceAsync(b, b, 1, DataType.FP32, ReduceOp.SUM).toCompletableFuture()
                    .thenRun(() -> comm.allReduce(b, b, 1, DataType.FP32, ReduceOp.SUM))
                    .orTimeout(30, TimeUnit.SECONDS).join();
                return b.getFloat(0);
            });
            assertEquals(List.of(6f, 6f), out); // (1 + 2) * 2
        }
        finally
        {
            release.set(true);
        }
    }

    @Test
    void allOfCombinesOperations() throws Exception
    {
        final List<String> out = onBoth(comm ->
        {
            final ByteBuffer a = floats(comm.rank() + 1);
            final ByteBuffer all = floats(0, 0);
            final ByteBuffer mine = floats(10 * comm.rank());
            final CompletableFuture<Void> both = CompletableFuture.allOf(
                comm.allReduceAsync(a, a, 1, DataType.FP32, ReduceOp.MAX).toCompletableFuture(),
                comm.allGatherAsync(mine, all, 1, DataType.FP32).toCompletableFuture());
            both.join();
            return a.getFloat(0) + " " + all.getFloat(0) + "," + all.getFloat(Float.BYTES);
        });
        assertEquals(List.of("2.0 0.0,10.0", "2.0 0.0,10.0"), out);
    }

    @Test
    void aSendAndAReceiveCompleteWithNobodyWaiting() throws Exception
    {
        final List<Float> out = onBoth(comm ->
        {
            final ByteBuffer b = floats(comm.rank() == 0 ? 42 : -1);
            final CommFuture op = comm.rank() == 0 ? comm.sendAsync(b, 1, DataType.FP32, 1) :
                comm.recvAsync(b, 1, DataType.FP32, 0);
            final CompletableFuture<Float> value = op.toCompletableFuture().thenApply(done -> b.getFloat(0));
            // Nothing here joins op: only the future's own waiter drives the transfer.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!value.isDone() && System.nanoTime() < deadline)
            {
                Thread.onSpinWait();
            }
            return value.getNow(Float.NaN);
        });
        assertEquals(List.of(42f, 42f), out);
    }

    @Test
    void aBoundedWaitEndsAtItsDeadlineWhileTheFuturesThreadDrivesTheReceive() throws Exception
    {
        final Communicator receiver = comms.get(0);
        final ByteBuffer b = floats(-1);
        final CommFuture op = receiver.recvAsync(b, 1, DataType.FP32, 1);
        final CompletableFuture<Void> future = op.toCompletableFuture(); // its thread now waits for the receive
        Thread.sleep(100);
        final long start = System.nanoTime();
        assertThrows(java.util.concurrent.TimeoutException.class, () -> op.get(200, TimeUnit.MILLISECONDS));
        final long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(waited < 5_000, "get(200 ms) returned after " + waited + " ms");
        comms.get(1).send(floats(7), 1, DataType.FP32, 0);
        future.get(30, TimeUnit.SECONDS);
        assertEquals(7f, b.getFloat(0));
    }

    @Test
    void aFailedOperationCompletesItExceptionallyWithItsHcclException() throws Exception
    {
        final Communicator survivor = comms.get(0);
        final ByteBuffer b = floats(1);
        final CommFuture op = survivor.allReduceAsync(b, b, 1, DataType.FP32, ReduceOp.SUM);
        final CompletableFuture<Void> future = op.toCompletableFuture();
        comms.get(1).abort(); // rank 1 never joins, and tells rank 0 why
        final Throwable seen = future.handle((done, failure) -> failure).get(30, TimeUnit.SECONDS);
        final HcclException e = assertInstanceOf(HcclException.class, seen);
        assertEquals(ErrorCode.E_REMOTE, e.errorCode(), e.getMessage());
        final CompletionException wrapped = assertThrows(CompletionException.class, future::join);
        assertSame(seen, wrapped.getCause());
        assertTrue(future.isCompletedExceptionally());
    }

    @Test
    void cancellingTheFutureDoesNotCancelTheOperation() throws Exception
    {
        final List<String> out = onBoth(comm ->
        {
            final ByteBuffer b = floats(comm.rank() + 1);
            if (comm.rank() == 1)
            {
                try
                {
                    Thread.sleep(300); // rank 0 cancels while the all-reduce waits for rank 1
                }
                catch (final InterruptedException e)
                {
                    Thread.currentThread().interrupt();
                }
            }
            final CommFuture op = comm.allReduceAsync(b, b, 1, DataType.FP32, ReduceOp.SUM);
            final CompletableFuture<Void> future = op.toCompletableFuture();
            final boolean cancelled = comm.rank() == 0 && future.cancel(true);
            op.join();
            return cancelled + " " + future.isCancelled() + " " + op.isCancelled() + " " + b.getFloat(0);
        });
        assertEquals("true true false 3.0", out.get(0));
        assertEquals("false false false 3.0", out.get(1));
    }
}
