package dev.hccl.core.watch;

import dev.hccl.api.CommMetrics;
import dev.hccl.api.HcclException;
import dev.hccl.api.Operation;
import dev.hccl.api.OperationMetrics;
import dev.hccl.api.SizeClassMetrics;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A communicator's always-on counters ({@link CommMetrics}): per operation, calls, failures, bytes, time, time waiting
 * for peers, the latest call, a latency histogram and calls and time per power-of-two size class; and the stalls.
 * <p>
 * One array, written without allocation. A collective's counters have one writer at a time, whoever runs the
 * communicator's stream, which hands over with a happens-before edge: its adds are a load and an ordered store
 * ({@code lazySet}), no atomic read-modify-write. Sends and receives complete on whichever thread waits for them, so
 * theirs are atomic adds. Readers (the user, JMX) see each counter whole, the set of them not as of one instant.
 */
final class OpMetrics
{
    private static final int COUNT = 0;
    private static final int FAILED = 1;
    private static final int BYTES = 2;
    private static final int NANOS = 3;
    private static final int WAIT = 4;
    private static final int LAST_NANOS = 5;
    private static final int LAST_BYTES = 6;
    private static final int LATENCY = 7;
    /** Size classes: class {@code k} holds sizes from {@code 2^k} to {@code 2^(k+1) - 1} (class 0 also 0). */
    static final int SIZE_CLASSES = 48;
    private static final int SIZES = LATENCY + OperationMetrics.LATENCY_BUCKETS;
    private static final int STRIDE = SIZES + 2 * SIZE_CLASSES;
    private static final Operation[] OPERATIONS = Operation.values();

    private final AtomicLongArray counters = new AtomicLongArray(OPERATIONS.length * STRIDE);
    private final AtomicLong stalls = new AtomicLong();

    /**
     * A collective ended: counted by the one thread that runs the communicator's operations.
     *
     * @param op     the operation.
     * @param bytes  its size, as nccl-tests counts it.
     * @param nanos  its time.
     * @param wait   the part spent waiting for peers.
     * @param failed whether it failed.
     */
    void collective(final Operation op, final long bytes, final long nanos, final long wait, final boolean failed)
    {
        count(op, bytes, nanos, wait, failed, false);
    }

    /**
     * A send or receive ended, counted by the thread that saw it complete (atomic adds: several may).
     *
     * @param op     send or receive.
     * @param bytes  its size.
     * @param nanos  its time.
     * @param wait   the part spent waiting for the peer.
     * @param failed whether it failed.
     */
    void pointToPoint(final Operation op, final long bytes, final long nanos, final long wait, final boolean failed)
    {
        count(op, bytes, nanos, wait, failed, true);
    }

    private void count(final Operation op, final long bytes, final long nanos, final long wait, final boolean failed,
        final boolean shared)
    {
        final int base = op.ordinal() * STRIDE;
        add(base + COUNT, 1, shared);
        if (failed)
        {
            add(base + FAILED, 1, shared);
        }
        add(base + BYTES, bytes, shared);
        add(base + NANOS, nanos, shared);
        add(base + WAIT, wait, shared);
        counters.lazySet(base + LAST_NANOS, nanos);
        counters.lazySet(base + LAST_BYTES, bytes);
        add(base + LATENCY + latencyBucket(nanos), 1, shared);
        final int size = base + SIZES + 2 * sizeClass(bytes);
        add(size, 1, shared);
        add(size + 1, nanos, shared);
    }

    /** A wait was reported as stalled. */
    void stalled()
    {
        stalls.incrementAndGet();
    }

    /**
     * The counters now.
     *
     * @param commId    the communicator's id.
     * @param rank      this rank.
     * @param worldSize the ranks.
     * @param failure   the communicator's failure, or null.
     * @return them.
     */
    CommMetrics snapshot(final long commId, final int rank, final int worldSize, final HcclException failure)
    {
        final List<OperationMetrics> ops = new ArrayList<>();
        for (final Operation op : OPERATIONS)
        {
            final int base = op.ordinal() * STRIDE;
            final long count = counters.get(base + COUNT);
            if (count == 0)
            {
                continue;
            }
            final long[] latency = new long[OperationMetrics.LATENCY_BUCKETS];
            for (int k = 0; k < latency.length; k++)
            {
                latency[k] = counters.get(base + LATENCY + k);
            }
            final List<SizeClassMetrics> sizes = new ArrayList<>();
            for (int k = 0; k < SIZE_CLASSES; k++)
            {
                final long calls = counters.get(base + SIZES + 2 * k);
                if (calls > 0)
                {
                    sizes.add(new SizeClassMetrics(k == 0 ? 0 : 1L << k, (1L << (k + 1)) - 1, calls,
                        counters.get(base + SIZES + 2 * k + 1)));
                }
            }
            ops.add(new OperationMetrics(op, count, counters.get(base + FAILED), counters.get(base + BYTES),
                counters.get(base + NANOS), counters.get(base + WAIT), counters.get(base + LAST_NANOS),
                counters.get(base + LAST_BYTES), latency, sizes, worldSize));
        }
        return new CommMetrics(Long.toHexString(commId), rank, worldSize, ops, stalls.get(), failure);
    }

    /** Under 1,024 ns: 0; else the power of two at or below, counted from 1,024 ns as 1; the last takes the rest. */
    static int latencyBucket(final long nanos)
    {
        final int log = 63 - Long.numberOfLeadingZeros(Math.max(1, nanos));
        return Math.min(OperationMetrics.LATENCY_BUCKETS - 1, Math.max(0, log - 9));
    }

    /** The power of two at or below {@code bytes} (0 for 0 and 1), the last class taking the rest. */
    static int sizeClass(final long bytes)
    {
        return Math.min(SIZE_CLASSES - 1, 63 - Long.numberOfLeadingZeros(Math.max(1, bytes)));
    }

    /** Adds: atomically when several threads may ({@code shared}), else as a load and an ordered store. */
    private void add(final int index, final long delta, final boolean shared)
    {
        if (shared)
        {
            counters.getAndAdd(index, delta);
        }
        else
        {
            counters.lazySet(index, counters.get(index) + delta);
        }
    }
}
