package dev.hccl.transport.netty;

import dev.hccl.api.spi.LibraryThreads;
import io.netty.util.concurrent.FastThreadLocalThread;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Names I/O threads {@code hccl-io-<rank>-<n>} and makes them daemons, so that a transport that is never closed does
 * not keep the JVM alive. {@link FastThreadLocalThread} lets Netty's per-thread caches take their fast path.
 */
final class IoThreadFactory implements ThreadFactory
{
    private final String prefix;
    private final AtomicInteger next = new AtomicInteger();

    IoThreadFactory(final int rank)
    {
        this.prefix = "hccl-io-" + rank + "-";
    }

    @Override
    public Thread newThread(final Runnable r)
    {
        final Thread t = new FastThreadLocalThread(LibraryThreads.placedAtStart(r), prefix + next.getAndIncrement());
        t.setDaemon(true);
        return t;
    }
}
