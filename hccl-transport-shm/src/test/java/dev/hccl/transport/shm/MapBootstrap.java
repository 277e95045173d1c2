package dev.hccl.transport.shm;

import dev.hccl.api.spi.Bootstrap;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * A {@link Bootstrap} in a map, shared by the ranks of one test; each key written once.
 */
final class MapBootstrap implements Bootstrap
{
    private final Map<String, byte[]> values = new HashMap<>();
    private final Map<String, Long> counters = new HashMap<>();
    /** Called on the putting thread before each value is published. */
    volatile BiConsumer<String, byte[]> onPut = (k, v) -> { };

    @Override
    public synchronized void put(final String key, final byte[] value)
    {
        onPut.accept(key, value);
        if (null != values.putIfAbsent(key, value.clone()))
        {
            throw new IllegalStateException("key written twice: " + key);
        }
        notifyAll();
    }

    @Override
    public synchronized byte[] get(final String key, final long deadlineNanos)
    {
        byte[] v;
        while (null == (v = values.get(key)))
        {
            final long left = deadlineNanos - System.nanoTime();
            if (left <= 0)
            {
                return null;
            }
            try
            {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return v.clone();
    }

    @Override
    public synchronized long add(final String key, final long delta)
    {
        return counters.merge(key, delta, Long::sum);
    }

    synchronized Map<String, byte[]> snapshot()
    {
        return new HashMap<>(values);
    }
}
