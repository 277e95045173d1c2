package dev.hccl.core.op;

import dev.hccl.api.spi.LibraryThreads;

import java.util.ArrayDeque;

/**
 * A communicator's execution stream: runs its operations one at a time, in issue order, as a CUDA stream runs NCCL
 * kernels. Ordering is what makes every rank run the same collective at the same time.
 * <p>
 * Operations run on the stream's own thread, except that a blocking call finding the stream idle (nothing queued,
 * nothing running) runs its operation on the caller's thread: the same order, without two thread hand-offs, which
 * dominate the time of a small collective.
 */
public final class ExecutionStream
{
    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    private final Thread thread;
    private boolean busy;
    private boolean stopping;

    /**
     * @param name its thread's name.
     */
    public ExecutionStream(final String name)
    {
        thread = LibraryThreads.newThread(this::loop, name);
        thread.start();
    }

    /**
     * Queues an operation behind those already issued.
     *
     * @param op the operation.
     */
    synchronized void execute(final Runnable op)
    {
        queue.add(op);
        notifyAll();
    }

    /**
     * Claims the stream for an operation on the caller's thread, when nothing is queued or running.
     *
     * @return true when claimed: run the operation, then {@link #release()}.
     */
    synchronized boolean tryClaim()
    {
        if (busy || stopping || !queue.isEmpty())
        {
            return false;
        }
        busy = true;
        return true;
    }

    /**
     * Ends a claim: operations queued meanwhile go on, on the stream's thread.
     */
    synchronized void release()
    {
        busy = false;
        // Only when there is work: waking the idle stream thread after every blocking call would cost each one a
        // futex wake and take a core from the next operation.
        if (!queue.isEmpty() || stopping)
        {
            notifyAll();
        }
    }

    /**
     * Runs what was queued, then stops.
     *
     * @param timeoutMillis the longest wait for the queued operations.
     * @return true when the stream stopped in time.
     */
    public boolean drainAndStop(final long timeoutMillis)
    {
        synchronized (this)
        {
            stopping = true;
            notifyAll();
        }
        if (Thread.currentThread() == thread)
        {
            return true;
        }
        try
        {
            thread.join(timeoutMillis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    private void loop()
    {
        while (true)
        {
            final Runnable op;
            synchronized (this)
            {
                while (busy || queue.isEmpty())
                {
                    if (stopping && !busy && queue.isEmpty())
                    {
                        return;
                    }
                    try
                    {
                        wait();
                    }
                    catch (final InterruptedException ex)
                    {
                        // only drainAndStop ends the stream
                    }
                }
                op = queue.poll();
                busy = true;
            }
            try
            {
                op.run();
            }
            finally
            {
                synchronized (this)
                {
                    busy = false;
                }
            }
        }
    }
}
