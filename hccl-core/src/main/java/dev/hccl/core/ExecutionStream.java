package dev.hccl.core;

import java.util.concurrent.LinkedBlockingQueue;

/**
 * A communicator's execution stream: one thread that runs its operations one at a time, in issue order, as a CUDA
 * stream runs NCCL kernels. Ordering is what makes every rank run the same collective at the same time.
 */
final class ExecutionStream
{
    private static final Runnable STOP = () -> { };

    private final LinkedBlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();
    private final Thread thread;

    ExecutionStream(final String name)
    {
        thread = new Thread(this::loop, name);
        thread.setDaemon(true);
        thread.start();
    }

    void execute(final Runnable op)
    {
        queue.add(op);
    }

    /**
     * Runs what was queued, then stops.
     *
     * @param timeoutMillis the longest wait for the queued operations.
     * @return true when the stream stopped in time.
     */
    boolean drainAndStop(final long timeoutMillis)
    {
        queue.add(STOP);
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
            try
            {
                op = queue.take();
            }
            catch (final InterruptedException ex)
            {
                continue; // only drainAndStop ends the stream
            }
            if (op == STOP)
            {
                return;
            }
            op.run();
        }
    }
}
