package dev.hccl.api.spi;

import java.util.concurrent.locks.LockSupport;

/**
 * The standard {@link WaitPolicy}, shaped as Agrona's {@code BackoffIdleStrategy}: spin, then yield the core, then
 * wait in the engine, longer as the idleness lasts. Stateless: the idleness is given on each call.
 * <ul>
 *     <li>Spins (polling without pause) for {@code spinNanos}: a few round trips, when the thread has a core to
 *     itself. With more ranks than cores on the node it must not spin: it would take the core from the rank that
 *     is to send the awaited message.</li>
 *     <li>Then polls between yields of its core until {@code yieldNanos}, so that the other processes of the node
 *     run.</li>
 *     <li>Then waits in the engine: up to {@link #SLEEP_MAX_NANOS} at a time in an engine that wakes when I/O
 *     arrives (a selector), or parks from {@link #PARK_MIN_NANOS} growing to {@link #PARK_MAX_NANOS} in one that
 *     does not (shared memory), which bounds the delay added to a message that arrives during a park.</li>
 * </ul>
 * With no engine (another thread completes the transfer and unparks this one) it spins at most
 * {@link #COMPLETION_SPIN_NANOS}, yields until {@link #COMPLETION_YIELD_NANOS} (about a loopback round trip, so that
 * this process's I/O thread can complete the transfer on this core without a wake-up), then parks until woken.
 */
public final class BackoffWait implements WaitPolicy
{
    /**
     * How long a thread with a core to itself spins: a few round trips between cores over shared memory. Not longer:
     * "a core to itself" counts ranks, not the JIT's threads, which take cores in a JVM's first seconds, nor other
     * processes; a spinning rank then keeps its core from the peer whose signal it awaits for the whole spin, which
     * made a blocking 8-byte all-reduce wait out the spin on almost every call. A yield afterwards returns at once
     * when nothing else wants the core, so waits longer than this poll nearly as often as a spin.
     */
    public static final long SPIN_NANOS = 5_000;
    /**
     * Looks at a signal before the spin proper, when it spins ({@link #quickLooks()}): each a read and a pause of the
     * core, a few tens of nanoseconds where a pause is longest, so all of them stay under {@link #SPIN_NANOS}.
     */
    public static final int QUICK_LOOKS = 32;
    /** Until when it yields between polls. */
    public static final long YIELD_NANOS = 1_000_000;
    /** The longest sleep in an engine that wakes on arrival, so that the waiter checks its deadline. */
    public static final long SLEEP_MAX_NANOS = 10_000_000;
    /** The first park in an engine that does not wake on arrival. */
    public static final long PARK_MIN_NANOS = 20_000;
    /** The longest park in an engine that does not wake on arrival. */
    public static final long PARK_MAX_NANOS = 1_000_000;
    /** With no engine: the longest spin before yielding. */
    public static final long COMPLETION_SPIN_NANOS = 5_000;
    /** With no engine: until when to yield before parking. */
    public static final long COMPLETION_YIELD_NANOS = 200_000;

    private static final BackoffWait WITH_CORE = new BackoffWait(SPIN_NANOS, YIELD_NANOS);
    private static final BackoffWait SHARING_CORES = new BackoffWait(0, YIELD_NANOS);

    private final long spinNanos;
    private final long yieldNanos;

    /**
     * A policy with its own phases.
     *
     * @param spinNanos  how long to spin.
     * @param yieldNanos until when to yield between polls; at least {@code spinNanos}.
     */
    public BackoffWait(final long spinNanos, final long yieldNanos)
    {
        if (spinNanos < 0 || yieldNanos < spinNanos)
        {
            throw new IllegalArgumentException("spinNanos " + spinNanos + ", yieldNanos " + yieldNanos);
        }
        this.spinNanos = spinNanos;
        this.yieldNanos = yieldNanos;
    }

    /**
     * The policy for a node that runs {@code ranksHere} ranks.
     *
     * @param ranksHere the ranks (processes) on this node.
     * @param cores     the cores this process may use.
     * @return a policy that spins when every rank has a core, else one that starts by yielding.
     */
    public static BackoffWait forNode(final int ranksHere, final int cores)
    {
        return ranksHere <= cores ? WITH_CORE : SHARING_CORES;
    }

    @Override
    public void idle(final ProgressEngine engine, final long idleNanos, final long leftNanos)
    {
        if (null == engine)
        {
            awaitCompletion(idleNanos, leftNanos);
            return;
        }
        if (idleNanos < spinNanos)
        {
            Thread.onSpinWait();
        }
        else if (idleNanos < yieldNanos)
        {
            Thread.yield();
        }
        else if (engine.wakesOnArrival())
        {
            engine.poll(Math.min(leftNanos, SLEEP_MAX_NANOS));
        }
        else
        {
            final long park = Math.max(PARK_MIN_NANOS, Math.min(PARK_MAX_NANOS, (idleNanos - yieldNanos) / 8));
            engine.poll(Math.min(leftNanos, park));
        }
    }

    private void awaitCompletion(final long idleNanos, final long leftNanos)
    {
        if (idleNanos < Math.min(spinNanos, COMPLETION_SPIN_NANOS))
        {
            Thread.onSpinWait();
        }
        else if (idleNanos < COMPLETION_YIELD_NANOS)
        {
            Thread.yield();
        }
        else
        {
            LockSupport.parkNanos(this, leftNanos);
        }
    }

    /**
     * How long this policy spins.
     *
     * @return nanoseconds.
     */
    public long spinNanos()
    {
        return spinNanos;
    }

    /**
     * {@inheritDoc} {@link #QUICK_LOOKS} when it spins, else 0.
     */
    @Override
    public int quickLooks()
    {
        return spinNanos > 0 ? QUICK_LOOKS : 0;
    }

    @Override
    public String toString()
    {
        return spinNanos > 0 ? "spin, yield, then sleep" : "yield, then sleep";
    }
}
