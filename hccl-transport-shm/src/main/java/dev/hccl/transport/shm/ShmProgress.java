package dev.hccl.transport.shm;

import dev.hccl.api.spi.Inbound;
import dev.hccl.api.spi.ProgressEngine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The transport's engine: the thread that waits for a transfer writes the queued sends and reads the peers' rings.
 * <p>
 * One thread drives at a time, holding a reentrant drive lock (an owner and a depth, the depth touched only by the
 * owner). Every {@link Inbound} callback runs on the driving thread, so the callbacks about one peer come from one
 * thread at a time and in the ring's order; the lock's hand-over gives each driver a view of what the previous one
 * did. The liveness watch ({@link ShmWatch}) drives only when no caller has for {@link #IDLE_TAKEOVER_NANOS}, one
 * poll at a time, and gives way to a caller that enters.
 * <p>
 * Shared memory has nothing to wake a waiting thread: {@link #poll(long)} parks for the time given and looks once
 * more.
 */
final class ShmProgress implements ProgressEngine
{
    /** How long the engine must go undriven before the watch drives it: longer than a gap between operations. */
    static final long IDLE_TAKEOVER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /** The most records read from one ring in one poll, so that a poll stays short. */
    static final int READ_LIMIT = 64;
    /** How long a caller waits for the watch's poll to end before it lets the watch drive for it. */
    static final long ENTER_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private static final VarHandle OWNER;
    private static final VarHandle CALLER_EXITS;

    static
    {
        try
        {
            OWNER = MethodHandles.lookup().findVarHandle(ShmProgress.class, "owner", Thread.class);
            CALLER_EXITS = MethodHandles.lookup().findVarHandle(ShmProgress.class, "callerExits", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final Inbound inbound;
    private final AtomicInteger callersWaiting = new AtomicInteger();
    /** The driving thread, or null. */
    private volatile Thread owner;
    /** Entries of the owner; the owner's alone. */
    private int depth;
    /** Whether the owner is inside {@link #poll(long)}; the owner's alone. */
    private boolean polling;
    /** Whether the owner is reading or writing the rings: close waits for it to leave. */
    private volatile boolean inPoll;
    /**
     * How many times a caller has stopped driving: written by the owner alone with ordered stores, so that an exit
     * reads no clock; the watch tells idleness from this count standing still ({@link #enterIfIdle()}).
     */
    @SuppressWarnings("unused")
    private long callerExits;
    /** The watch's: the count it last saw, and since when by its clock (as if idle since long before it started). */
    private long watchSawExits;
    private long watchSawSinceNanos = System.nanoTime() - IDLE_TAKEOVER_NANOS;
    private volatile Thread idleDriver;
    private volatile ShmPeer[] peers = new ShmPeer[0];
    private volatile boolean closing;

    ShmProgress(final Inbound inbound)
    {
        this.inbound = inbound;
    }

    /**
     * Sets the peers to serve, once connected.
     *
     * @param peers the connected peers.
     */
    void peers(final ShmPeer[] peers)
    {
        this.peers = peers;
    }

    /**
     * Names the thread that drives only while no caller does.
     *
     * @param thread the watch's thread.
     */
    void idleDriver(final Thread thread)
    {
        this.idleDriver = thread;
    }

    /**
     * {@inheritDoc}
     * <p>
     * Waits up to {@link #ENTER_WAIT_NANOS} for the watch's poll to end; returns false once the transport closes.
     */
    @Override
    public boolean enter()
    {
        final Thread me = Thread.currentThread();
        if (owner == me)
        {
            depth++;
            return true;
        }
        if (closing)
        {
            return false;
        }
        if (OWNER.compareAndSet(this, null, me))
        {
            depth = 1;
            return true;
        }
        callersWaiting.incrementAndGet();
        try
        {
            final long giveUp = System.nanoTime() + ENTER_WAIT_NANOS;
            while (!closing)
            {
                final Thread holder = owner;
                if (null == holder)
                {
                    if (OWNER.compareAndSet(this, null, me))
                    {
                        depth = 1;
                        return true;
                    }
                }
                else if (holder != idleDriver || System.nanoTime() - giveUp >= 0)
                {
                    return false;
                }
                Thread.onSpinWait();
            }
            return false;
        }
        finally
        {
            callersWaiting.decrementAndGet();
        }
    }

    @Override
    public void exit()
    {
        final Thread me = Thread.currentThread();
        if (owner != me)
        {
            throw new IllegalStateException("exit() without enter() on " + me.getName());
        }
        if (0 == --depth)
        {
            if (me != idleDriver)
            {
                CALLER_EXITS.setRelease(this, (long)CALLER_EXITS.get(this) + 1);
            }
            owner = null;
        }
    }

    /**
     * {@inheritDoc}
     * <p>
     * Writes what fits of every link's queued sends (skipping a link whose sender holds its lock), reads every
     * peer's ring, and reports link failures. A poll from inside an {@link Inbound} callback reads nothing: reading a
     * ring there would deliver the peer's next message before the current one ends.
     *
     * @return the records written and read, and the failures reported.
     */
    @Override
    public int poll(final long waitNanos)
    {
        if (owner != Thread.currentThread())
        {
            throw new IllegalStateException("poll() outside enter()/exit() on " + Thread.currentThread().getName());
        }
        if (polling)
        {
            if (waitNanos > 0)
            {
                LockSupport.parkNanos(this, waitNanos);
            }
            return 0;
        }
        polling = true;
        try
        {
            int n = pollOnce();
            if (0 == n && waitNanos > 0)
            {
                LockSupport.parkNanos(this, waitNanos);
                n = pollOnce();
            }
            return n;
        }
        finally
        {
            polling = false;
        }
    }

    private int pollOnce()
    {
        // Set before closing is read, as close() sets closing before it reads this: one of the two sees the other.
        inPoll = true;
        try
        {
            if (closing)
            {
                return 0;
            }
            int n = 0;
            for (final ShmPeer p : peers)
            {
                n += p.link.flush();
                n += p.receiver.poll(READ_LIMIT);
                n += p.settle(inbound);
            }
            return n;
        }
        finally
        {
            inPoll = false;
        }
    }

    /**
     * {@inheritDoc}
     *
     * @return false: nothing wakes a waiting poll.
     */
    @Override
    public boolean wakesOnArrival()
    {
        return false;
    }

    /**
     * For the watch: enters when no caller has driven for {@link #IDLE_TAKEOVER_NANOS} and none waits to: no caller
     * has stopped driving since the watch looked that long ago (so it takes over one look later than a clock read at
     * every exit would allow, a few milliseconds).
     *
     * @return true when the calling thread now drives and must {@link #exit()}.
     */
    boolean enterIfIdle()
    {
        final long exits = (long)CALLER_EXITS.getAcquire(this);
        final long now = System.nanoTime();
        if (exits != watchSawExits)
        {
            watchSawExits = exits;
            watchSawSinceNanos = now;
            return false;
        }
        if (closing || null != owner || callersWaiting.get() > 0 || now - watchSawSinceNanos < IDLE_TAKEOVER_NANOS)
        {
            return false;
        }
        if (OWNER.compareAndSet(this, null, Thread.currentThread()))
        {
            depth = 1;
            return true;
        }
        return false;
    }

    /**
     * For close: stops driving for good, then makes sure that no thread touches the rings any more: takes the drive
     * lock, or sees that the thread that holds it is outside its poll (it reads {@code closing} before it touches
     * the rings again, and finds it set). Never succeeds on a thread that drives: that is a callback, in the middle
     * of a poll.
     *
     * @param timeoutNanos how long to wait for the driving thread to leave its poll.
     * @return {@link Quiet#HELD} (then {@link #release()} after releasing the memory), {@link Quiet#OUT_OF_POLL}, or
     * {@link Quiet#NO} when the rings may still be touched.
     */
    Quiet closeAndQuiesce(final long timeoutNanos)
    {
        closing = true;
        final Thread me = Thread.currentThread();
        if (owner == me)
        {
            return Quiet.NO;
        }
        final long deadline = System.nanoTime() + timeoutNanos;
        while (true)
        {
            if (OWNER.compareAndSet(this, null, me))
            {
                depth = 1;
                return Quiet.HELD;
            }
            if (!inPoll)
            {
                return Quiet.OUT_OF_POLL;
            }
            if (System.nanoTime() - deadline >= 0)
            {
                return Quiet.NO;
            }
            LockSupport.parkNanos(this, 50_000);
        }
    }

    /** What {@link #closeAndQuiesce} achieved. */
    enum Quiet
    {
        /** The close holds the drive lock. */
        HELD,
        /** Another thread holds it, but will not touch the rings again. */
        OUT_OF_POLL,
        /** A thread may still touch the rings. */
        NO
    }

    /**
     * Stops driving for good: polls read nothing from now on and {@link #enter()} returns false.
     */
    void stop()
    {
        closing = true;
    }

    /**
     * Lets go of the lock that {@link #closeAndQuiesce} took.
     */
    void release()
    {
        depth = 0;
        owner = null;
    }
}
