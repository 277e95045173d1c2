package dev.hccl.transport.netty;

import dev.hccl.api.spi.LibraryThreads;
import dev.hccl.api.spi.ProgressEngine;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelPromise;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.AbstractScheduledEventExecutor;
import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.internal.ThreadExecutorMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A Netty event loop with no thread of its own: whichever thread holds the drive lock runs it, and that is the
 * thread that waits for a transfer. A collective's sends, the reads that complete its receives and the reduction of
 * what arrives then all happen on the one thread that issued it, with no hand-over to an I/O thread and back; that
 * hand-over (a futex wake on each side) is most of a small message's latency in a threaded design.
 * <p>
 * Netty's own {@code ManualIoEventLoop} fixes its thread once; here the thread changes with the operation (the
 * caller's, or the communicator's stream thread for an asynchronous one), so the loop is "in" whichever thread holds
 * the lock, and the lock's hand-over gives each driver a view of everything the previous one did.
 * <p>
 * A thread of the loop's own, the idle driver, runs it while no other thread has for {@link #IDLE_TAKEOVER_NANOS},
 * blocking in the kernel: connections are made, peers' deaths and aborts noticed and late tasks run between
 * operations too. It gives way to a thread that {@link #enter()}s, waking from the kernel for it.
 */
final class CallerDrivenEventLoop extends AbstractScheduledEventExecutor implements IoEventLoop, ProgressEngine
{
    /** How long the loop must go undriven before the idle driver takes it: longer than a gap between operations. */
    static final long IDLE_TAKEOVER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /** The longest the idle driver sleeps in the kernel at a time, so that it notices a shutdown. */
    static final long IDLE_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final Logger LOG = LoggerFactory.getLogger(CallerDrivenEventLoop.class);
    private static final int ST_STARTED = 0;
    private static final int ST_SHUTTING_DOWN = 1;
    private static final int ST_TERMINATED = 2;

    private final IoHandler handler;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ReentrantLock driveLock = new ReentrantLock();
    private final AtomicInteger state = new AtomicInteger(ST_STARTED);
    private final AtomicInteger callersWaiting = new AtomicInteger();
    private final Promise<Void> terminationFuture = new DefaultPromise<>(GlobalEventExecutor.INSTANCE);
    private final Thread idleDriver;
    private final PollContext pollContext = new PollContext();

    /** The thread that holds the drive lock, or null; set after locking and cleared before unlocking. */
    private volatile Thread driver;
    /** When a caller last stopped driving: the idle driver waits {@link #IDLE_TAKEOVER_NANOS} from then. */
    private volatile long lastExitNanos;
    // Guarded by driveLock.
    private boolean initialized;

    /**
     * A loop over the given kind of I/O; its idle driver starts at once.
     *
     * @param factory    epoll's or NIO's handler factory.
     * @param threadName the idle driver's name.
     */
    CallerDrivenEventLoop(final IoHandlerFactory factory, final String threadName)
    {
        this.handler = factory.newHandler(this);
        this.lastExitNanos = System.nanoTime() - IDLE_TAKEOVER_NANOS;
        this.idleDriver = new FastThreadLocalThread(LibraryThreads.placedAtStart(this::idleDriverLoop), threadName);
        idleDriver.setDaemon(true);
        idleDriver.start();
    }

    // ------------------------------------------------------------------------------------------ ProgressEngine

    @Override
    public boolean enter()
    {
        if (driveLock.isHeldByCurrentThread())
        {
            driveLock.lock();
            return true;
        }
        if (isShuttingDown())
        {
            return false;
        }
        if (acquired())
        {
            return true;
        }
        // The idle driver gives way: tell it, wake it from the kernel and wait for it to let go.
        callersWaiting.incrementAndGet();
        try
        {
            while (true)
            {
                final Thread holder = driver;
                if (holder != idleDriver && holder != null)
                {
                    return false;
                }
                handler.wakeup();
                if (driveLock.tryLock(1, TimeUnit.MILLISECONDS))
                {
                    driver = Thread.currentThread();
                    return true;
                }
                if (isShuttingDown())
                {
                    return false;
                }
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
        finally
        {
            callersWaiting.decrementAndGet();
        }
    }

    private boolean acquired()
    {
        if (driveLock.tryLock())
        {
            driver = Thread.currentThread();
            return true;
        }
        return false;
    }

    @Override
    public void exit()
    {
        if (1 == driveLock.getHoldCount())
        {
            lastExitNanos = System.nanoTime();
            driver = null;
        }
        driveLock.unlock();
    }

    @Override
    public int poll(final long waitNanos)
    {
        if (!driveLock.isHeldByCurrentThread())
        {
            throw new IllegalStateException("poll() outside enter()/exit() on " + Thread.currentThread().getName());
        }
        pollContext.maxBlockingNanos = waitNanos;
        return runOnce();
    }

    // ------------------------------------------------------------------------------------------ running

    /** Runs ready I/O, then the queued and due tasks; the caller holds the drive lock. */
    private int runOnce()
    {
        if (!initialized)
        {
            initialized = true;
            handler.initialize();
        }
        final var previous = ThreadExecutorMap.setCurrentExecutor(this);
        try
        {
            if (state.get() == ST_TERMINATED)
            {
                // The handler is gone: a caller that still waits sleeps as asked instead of spinning.
                if (pollContext.maxBlockingNanos > 0)
                {
                    LockSupport.parkNanos(this, pollContext.maxBlockingNanos);
                }
                return 0;
            }
            // Also while shutting down: a caller still driving must see its links close, not spin on an idle loop.
            return handler.run(pollContext) + runTasks();
        }
        finally
        {
            ThreadExecutorMap.setCurrentExecutor(previous);
        }
    }

    private int runTasks()
    {
        fetchFromScheduledTaskQueue(tasks);
        int ran = 0;
        Runnable task;
        while (null != (task = tasks.poll()))
        {
            safeExecute(task);
            ran++;
        }
        return ran;
    }

    private void idleDriverLoop()
    {
        try
        {
            while (!isShuttingDown())
            {
                final long undriven = System.nanoTime() - lastExitNanos;
                if (callersWaiting.get() > 0 || undriven < IDLE_TAKEOVER_NANOS || !acquired())
                {
                    LockSupport.parkNanos(this, Math.max(IDLE_TAKEOVER_NANOS - undriven, IDLE_TAKEOVER_NANOS / 4));
                    continue;
                }
                try
                {
                    while (callersWaiting.get() == 0 && !isShuttingDown())
                    {
                        pollContext.maxBlockingNanos = IDLE_WAIT_NANOS;
                        runOnce();
                    }
                }
                finally
                {
                    driver = null;
                    driveLock.unlock();
                }
            }
            terminate();
        }
        catch (final Throwable t)
        {
            LOG.error("the idle I/O driver stopped", t);
            terminationFuture.tryFailure(t);
        }
    }

    /** Runs what is queued, then lets the handler release its resources; waits for a driving caller to leave. */
    private void terminate()
    {
        driveLock.lock();
        driver = idleDriver;
        try
        {
            if (!initialized)
            {
                initialized = true;
                handler.initialize();
            }
            runTasks();
            handler.prepareToDestroy();
            runTasks();
            // From here execute() rejects what this drain may miss, and wakes the handler no more.
            state.set(ST_TERMINATED);
            handler.destroy();
            while (runTasks() > 0)
            {
                // Tasks that the destruction queued (channels' close notifications) run before the end.
            }
            cancelScheduledTasks();
        }
        finally
        {
            state.set(ST_TERMINATED);
            driver = null;
            driveLock.unlock();
            terminationFuture.trySuccess(null);
        }
    }

    /**
     * The handler's view of one run: blocks only when nothing is queued, and no longer than asked or until the next
     * scheduled task is due.
     */
    private final class PollContext implements IoHandlerContext
    {
        long maxBlockingNanos;

        @Override
        public boolean canBlock()
        {
            // A caller waiting to take the loop must not find the idle driver asleep: its wake-up may have come
            // before the handler armed it.
            return maxBlockingNanos > 0 && tasks.isEmpty() && !hasScheduledTasks() && callersWaiting.get() == 0;
        }

        @Override
        public long delayNanos(final long currentTimeNanos)
        {
            final long wait = Math.max(0, maxBlockingNanos);
            return Math.min(wait, CallerDrivenEventLoop.this.delayNanos(currentTimeNanos, wait));
        }

        @Override
        public long deadlineNanos()
        {
            final long now = ticker().nanoTime();
            final long next = nextScheduledTaskDeadlineNanos();
            final long wait = Math.max(0, maxBlockingNanos);
            return (next == -1 || next - now > wait) ? now + wait : next;
        }
    }

    // ------------------------------------------------------------------------------------------ EventLoop

    @Override
    public boolean inEventLoop(final Thread thread)
    {
        return thread == driver;
    }

    @Override
    public void execute(final Runnable task)
    {
        Objects.requireNonNull(task, "task");
        if (state.get() == ST_TERMINATED)
        {
            throw new RejectedExecutionException("the event loop has terminated");
        }
        tasks.add(task);
        if (state.get() == ST_TERMINATED)
        {
            // Added after the last drain began: if it is still queued, nobody will run it.
            if (tasks.remove(task))
            {
                throw new RejectedExecutionException("the event loop has terminated");
            }
            return;
        }
        if (!inEventLoop())
        {
            // Wakes a driver that sleeps in the kernel; one that polls sees the task on its next poll.
            handler.wakeup();
        }
    }

    @Override
    public CallerDrivenEventLoop next()
    {
        return this;
    }

    @Override
    public IoEventLoopGroup parent()
    {
        return null;
    }

    @Override
    public Future<IoRegistration> register(final IoHandle handle)
    {
        final Promise<IoRegistration> promise = newPromise();
        if (inEventLoop())
        {
            registerNow(handle, promise);
        }
        else
        {
            execute(() -> registerNow(handle, promise));
        }
        return promise;
    }

    private void registerNow(final IoHandle handle, final Promise<IoRegistration> promise)
    {
        try
        {
            promise.setSuccess(handler.register(handle));
        }
        catch (final Exception ex)
        {
            promise.setFailure(ex);
        }
    }

    @Deprecated
    @Override
    public ChannelFuture register(final Channel channel)
    {
        return register(new DefaultChannelPromise(channel, this));
    }

    @Deprecated
    @Override
    public ChannelFuture register(final ChannelPromise promise)
    {
        promise.channel().unsafe().register(this, promise);
        return promise;
    }

    @Deprecated
    @Override
    public ChannelFuture register(final Channel channel, final ChannelPromise promise)
    {
        channel.unsafe().register(this, promise);
        return promise;
    }

    @Override
    public boolean isCompatible(final Class<? extends IoHandle> handleType)
    {
        return handler.isCompatible(handleType);
    }

    @Override
    public boolean isIoType(final Class<? extends IoHandler> handlerType)
    {
        return handler.getClass().equals(handlerType);
    }

    /**
     * Stops the loop: the idle driver takes it once no caller drives, runs what is queued and closes the handler.
     * The quiet period is not honoured: the transport stops submitting work before it shuts the loop down.
     */
    @Override
    public Future<?> shutdownGracefully(final long quietPeriod, final long timeout, final TimeUnit unit)
    {
        if (state.compareAndSet(ST_STARTED, ST_SHUTTING_DOWN))
        {
            handler.wakeup();
            LockSupport.unpark(idleDriver);
        }
        return terminationFuture;
    }

    @Deprecated
    @Override
    public void shutdown()
    {
        shutdownGracefully(0, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public Future<?> terminationFuture()
    {
        return terminationFuture;
    }

    @Override
    public boolean isShuttingDown()
    {
        return state.get() >= ST_SHUTTING_DOWN;
    }

    @Override
    public boolean isShutdown()
    {
        return state.get() >= ST_SHUTTING_DOWN;
    }

    @Override
    public boolean isTerminated()
    {
        return state.get() == ST_TERMINATED;
    }

    @Override
    public boolean awaitTermination(final long timeout, final TimeUnit unit) throws InterruptedException
    {
        return terminationFuture.await(timeout, unit);
    }
}
