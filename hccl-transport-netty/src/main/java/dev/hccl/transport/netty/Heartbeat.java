package dev.hccl.transport.netty;

import dev.hccl.api.spi.LibraryThreads;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * Liveness that does not depend on operations: every interval (a second, or a quarter of the timeout if shorter) each
 * connection that carries nothing else gets a HEARTBEAT frame, and a connection whose peer has sent nothing for the
 * heartbeat timeout fails its link, naming the peer. One daemon thread per transport; it only queues frames and reads
 * clocks, so a busy or stopped event loop cannot hide a frozen peer, and a frozen peer cannot hold it.
 */
final class Heartbeat implements AutoCloseable
{
    /** The longest time between two beats. */
    static final long MAX_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ScheduledExecutorService timer;
    private final long timeoutNanos;

    /**
     * Starts the beat.
     *
     * @param rank      this rank, for the thread's name.
     * @param worldSize ranks.
     * @param links     the link to each rank, or null while it is not up.
     * @param timeout   the heartbeat timeout.
     */
    Heartbeat(final int rank, final int worldSize, final IntFunction<TcpLink> links, final Duration timeout)
    {
        this.timeoutNanos = timeout.toNanos();
        final long interval = Math.max(1, Math.min(MAX_INTERVAL_NANOS, timeoutNanos / 4));
        this.timer = Executors.newSingleThreadScheduledExecutor(
            task -> LibraryThreads.newThread(task, "hccl-tcp-" + rank + "-heartbeat"));
        timer.scheduleAtFixedRate(() ->
        {
            final long now = System.nanoTime();
            for (int peer = 0; peer < worldSize; peer++)
            {
                final TcpLink link = links.apply(peer);
                if (link != null)
                {
                    link.beat(now, timeoutNanos);
                }
            }
        }, interval, interval, TimeUnit.NANOSECONDS);
    }

    @Override
    public void close()
    {
        timer.shutdownNow();
    }
}
