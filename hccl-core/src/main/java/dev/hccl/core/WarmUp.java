package dev.hccl.core;

import dev.hccl.algorithms.kernel.KernelWarmUp;
import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The warm-up of a new communicator ({@link CommConfig#WARMUP_MS}): the reductions' loops run locally while init waits
 * for its peers ({@link #startKernels}), then small SUM all-reduces on a twin of it (below;
 * one to three elements of FP32, FP64, INT64 and INT32 in turn, 4 KiB one time in 16, at varying offsets; a barrier
 * after every eighth), alternately out of place and in place, before {@code Hccl.init} returns. The JVM then
 * interprets and compiles an operation's path (the issue, the algorithm's choice, the algorithm's steps, the
 * reduction) while no caller waits for a result, instead of during the first calls of the user's.
 * <p>
 * <b>Agreement.</b> Each all-reduce sums every rank's "done", 1 once the rank's time is spent (or its JVM warmed up
 * before), else 0. Every rank reads the same sum, so every rank stops after the same all-reduce, the first whose sum
 * is the world size, and none is left waiting for a partner in an operation the others skipped. Ranks whose budgets
 * differ all run until the longest is spent; whether the warm-up runs at all the rendezvous checks, as a rank that
 * skips it would issue its first call against its peers' warm-up.
 * <p>
 * <b>Cost.</b> The budget, plus one operation, on the rank that finishes last; once per JVM, as the compiled code
 * serves every communicator of the process: a later communicator adds one operation.
 * <p>
 * <b>A twin.</b> The operations run on a twin of the new communicator: the same ranks, links and node arena under an id
 * of its own, so that the communicator's sequence starts with the user's first call (errors, the flight recorder and
 * the close's count of collectives name the user's operations), while the code they run, and so what the JVM
 * compiles, is the same. The twin is closed, and so every rank is out of the arena, before {@code init} returns.
 */
final class WarmUp
{
    /** Whether a communicator of this JVM has warmed up: the JIT's work is the process's, done once. */
    private static final AtomicBoolean WARMED = new AtomicBoolean();
    /** The longest wait for the reductions' warm-up, in budgets. */
    static final int KERNELS_WAIT_FACTOR = 10;
    /** Whether this JVM has started warming the reductions up ({@link #startKernels}), once. */
    private static final AtomicBoolean KERNELS_STARTED = new AtomicBoolean();

    /** Mixed into a root communicator's id to give its twin's ("WARMUP"). */
    private static final long TWIN_SALT = 0x5741524D5550L;
    /** The types the operations rotate through: the common dense ones, whose reductions a job mixes. */
    private static final DataType[] TYPES = {DataType.FP32, DataType.FP64, DataType.INT64, DataType.INT32};
    /** Bytes of the larger operation, one in {@link #LARGE_EVERY}: enough for the reductions' vector loops. */
    private static final int LARGE_BYTES = 4096;
    private static final int LARGE_EVERY = 16;
    /** A barrier after every this many operations. */
    private static final int BARRIER_EVERY = 8;
    /** Bytes over which the views' offsets vary. */
    private static final int SPREAD = 64;

    private WarmUp()
    {
    }

    /**
     * Starts warming the reductions up ({@link KernelWarmUp}) on a daemon thread of its own, once per JVM, at the start
     * of init: it runs while init waits for its peers, with as much CPU time as the collective warm-up has time, whose
     * operations are too small to make the JIT compile a reduction's vector loop.
     *
     * @param worldSize the job's ranks; a job of one warms nothing up.
     * @param budgetMs  {@link CommConfig#WARMUP_MS}; 0 warms nothing up.
     * @return the warm-up, for {@link #awaitKernels}; null when none was started.
     */
    static FutureTask<Integer> startKernels(final int worldSize, final int budgetMs)
    {
        if (budgetMs == 0 || worldSize == 1 || !KERNELS_STARTED.compareAndSet(false, true))
        {
            return null;
        }
        final FutureTask<Integer> kernels = new FutureTask<>(() -> KernelWarmUp.run(budgetMs * 1_000_000L));
        final Thread thread = new Thread(kernels, "hccl-kernel-warmup");
        thread.setDaemon(true);
        thread.start();
        return kernels;
    }

    /**
     * Waits for the reductions' warm-up to end, which it does once it has spent its CPU time, so that no thread of the
     * warm-up takes a core from the caller's first operations; on a node with more ranks than cores that takes longer
     * than the budget, so the wait is bounded by {@link #KERNELS_WAIT_FACTOR} budgets (the thread is a daemon).
     *
     * @param kernels  what {@link #startKernels} returned.
     * @param budgetMs the budget it was given.
     * @return the reductions it ran, or -1 when none was started or it did not end in time.
     */
    static int awaitKernels(final FutureTask<Integer> kernels, final int budgetMs)
    {
        if (null == kernels)
        {
            return -1;
        }
        try
        {
            return kernels.get(Math.max(1, (long)budgetMs * KERNELS_WAIT_FACTOR), TimeUnit.MILLISECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return -1;
        }
        catch (final ExecutionException | TimeoutException ex)
        {
            return -1;
        }
    }

    /**
     * The id of a root communicator's warm-up twin, the same on every rank.
     *
     * @param commId the root communicator's id.
     * @return the twin's.
     */
    static long twinId(final long commId)
    {
        return (commId ^ TWIN_SALT) & Long.MAX_VALUE;
    }

    /**
     * Warms a new root communicator up, collectively, on its twin: the same ranks and links with a sequence of its
     * own, whose operations take the same code path as the communicator's and leave its sequence as it was.
     *
     * @param worldSize the root communicator's ranks.
     * @param twins     makes its twin, which this closes.
     * @param budgetMs  this rank's time, milliseconds; {@code 0} on every rank skips the warm-up.
     * @return the number of all-reduces run, the same on every rank.
     */
    static int run(final int worldSize, final Supplier<Communicator> twins, final int budgetMs)
    {
        if (budgetMs == 0 || worldSize == 1)
        {
            return 0;
        }
        final Communicator twin = twins.get();
        final int allReduces;
        try
        {
            allReduces = run(twin, budgetMs, WARMED);
        }
        catch (final RuntimeException ex)
        {
            try
            {
                twin.close();
            }
            catch (final RuntimeException suppressed)
            {
                ex.addSuppressed(suppressed);
            }
            throw ex;
        }
        twin.close();
        return allReduces;
    }

    /**
     * Runs the warm-up, collectively, against a given record of whether this JVM has warmed up.
     *
     * @param comm     a communicator of more than one rank, before its first call.
     * @param budgetMs this rank's time, milliseconds; {@code 0} on every rank skips the warm-up.
     * @param warmed   whether this JVM has warmed up before; set once this warm-up ends.
     * @return the number of all-reduces run, the same on every rank.
     */
    static int run(final Communicator comm, final int budgetMs, final AtomicBoolean warmed)
    {
        if (budgetMs == 0 || comm.worldSize() == 1)
        {
            return 0;
        }
        final ByteBuffer pool = ByteBuffer.allocateDirect(2 * (LARGE_BYTES + SPREAD)).order(ByteOrder.nativeOrder());
        final int half = pool.capacity() / 2;
        final long deadline = System.nanoTime() + budgetMs * 1_000_000L;
        int operations = 0;
        long done;
        do
        {
            // Types, counts, offsets and both placements vary, as a user's calls do: code compiled for one shape
            // alone is thrown away at the first call of another and compiled again while that caller waits.
            final boolean large = operations % LARGE_EVERY == LARGE_EVERY - 1;
            // Each size takes the types in turn, FP32 first.
            final DataType type = TYPES[(large ? operations / LARGE_EVERY : operations >> 2) % TYPES.length];
            final int bytes = large ? LARGE_BYTES : (1 + operations % 3) * type.size();
            final int offset = ((operations >> 1) & 3) * (SPREAD / 4);
            final boolean inPlace = (operations & 1) == 1;
            final ByteBuffer recv = pool.slice(half + offset, bytes).order(ByteOrder.nativeOrder());
            final ByteBuffer send = inPlace ? recv : pool.slice(offset, bytes).order(ByteOrder.nativeOrder());
            put(send, type, warmed.get() || System.nanoTime() - deadline >= 0 ? 1 : 0);
            try
            {
                comm.allReduce(send, recv, bytes / type.size(), type, ReduceOp.SUM);
                if (operations % BARRIER_EVERY == BARRIER_EVERY - 1)
                {
                    comm.barrier();
                }
            }
            catch (final HcclException ex)
            {
                // The cause, its code and the rank at fault as they were; the words say it was init's warm-up.
                final String where = ex.operation() == null ? "" : " in its " + ex.operation().displayName() +
                    (ex.sequence() == HcclException.NO_SEQUENCE ? "" : " #" + ex.sequence());
                throw new HcclException(ex.errorCode(), ex.rank(), ex.peer(), Operation.INIT, HcclException.NO_SEQUENCE,
                    "the warm-up (" + CommConfig.WARMUP_MS + ") failed" + where + ": " + ex.detail(), ex);
            }
            operations++;
            done = get(recv, type);
            // Every other element is zero on every rank, so that every sum stays zero but the agreement's.
            put(send, type, 0);
            put(recv, type, 0);
        }
        while (done < comm.worldSize());
        warmed.set(true);
        return operations;
    }

    private static void put(final ByteBuffer buf, final DataType type, final long value)
    {
        switch (type)
        {
            case FP32 -> buf.putFloat(0, value);
            case FP64 -> buf.putDouble(0, value);
            case INT32 -> buf.putInt(0, (int)value);
            default -> buf.putLong(0, value);
        }
    }

    private static long get(final ByteBuffer buf, final DataType type)
    {
        return switch (type)
        {
            case FP32 -> (long)buf.getFloat(0);
            case FP64 -> (long)buf.getDouble(0);
            case INT32 -> buf.getInt(0);
            default -> buf.getLong(0);
        };
    }
}
