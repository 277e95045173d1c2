package dev.hccl.core.bootstrap;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the rendezvous store holds: its keys and values, bounded in bytes and count, the waits for keys not set yet,
 * and the verdict once the rendezvous was given up. {@link StoreServer} serves it over the network; every method is
 * one step under this object's lock, and every change wakes the waits.
 */
final class StoreTable
{
    private final Map<String, byte[]> values = new HashMap<>();
    /** Bytes of the keys and values held. */
    private long storedBytes;
    /** Why the rendezvous was given up, or null. */
    private Verdict aborted;
    private boolean closed;

    /**
     * Stores a value, unless that would pass the bounds.
     *
     * @param key      the key.
     * @param value    its value.
     * @param maxBytes the bytes of keys and values held at most.
     * @return whether it was stored.
     */
    synchronized boolean set(final String key, final byte[] value, final long maxBytes)
    {
        final byte[] old = values.get(key);
        final long after = storedBytes + value.length + (old == null ? 2L * key.length() : -old.length);
        if (after > maxBytes || (old == null && values.size() >= StoreProtocol.MAX_KEYS))
        {
            return false;
        }
        values.put(key, value);
        storedBytes = after;
        notifyAll();
        return true;
    }

    /**
     * A key's value, waiting for it to be set.
     *
     * @param key        the key.
     * @param waitMillis how long to wait at most.
     * @return the value, or null when it was not set in time, the verdict came or the store closed.
     * @throws InterruptedException when interrupted while waiting.
     */
    synchronized byte[] get(final String key, final long waitMillis) throws InterruptedException
    {
        final long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        byte[] value;
        while ((value = values.get(key)) == null && !closed && aborted == null)
        {
            final long leftMillis = (deadline - System.nanoTime()) / 1_000_000L;
            if (leftMillis <= 0)
            {
                return null;
            }
            wait(leftMillis);
        }
        return value;
    }

    /**
     * Adds to the number a key holds (none: 0).
     *
     * @param key      the key.
     * @param delta    what to add.
     * @param maxBytes the bytes of keys and values held at most.
     * @return the sum, or null when it could not be stored (the store is full); every long is a possible sum.
     * @throws IOException when the key holds something else than a number.
     */
    synchronized Long add(final String key, final long delta, final long maxBytes) throws IOException
    {
        final byte[] old = values.get(key);
        final long sum;
        try
        {
            sum = (old == null ? 0 : Long.parseLong(new String(old, StandardCharsets.US_ASCII))) + delta;
        }
        catch (final NumberFormatException ex)
        {
            throw new IOException("add to key " + key + ", which holds no number");
        }
        return set(key, Long.toString(sum).getBytes(StandardCharsets.US_ASCII), maxBytes) ? Long.valueOf(sum) : null;
    }

    /**
     * @param key the key.
     * @return whether it is set.
     */
    synchronized boolean contains(final String key)
    {
        return values.containsKey(key);
    }

    /**
     * Gives up the rendezvous: waits end, and every {@code get} of a missing key answers null at once. The first
     * verdict stands.
     *
     * @param verdict why.
     */
    synchronized void abort(final Verdict verdict)
    {
        if (aborted == null)
        {
            aborted = verdict;
            notifyAll();
        }
    }

    /**
     * @return the verdict, or null while the rendezvous stands.
     */
    synchronized Verdict aborted()
    {
        return aborted;
    }

    /**
     * The ranks but 0 that have not said they heard the verdict ({@link StoreProtocol#HEARD_PREFIX}).
     *
     * @param worldSize the job's ranks.
     * @return them.
     */
    synchronized List<Integer> notHeard(final int worldSize)
    {
        final List<Integer> waiting = new ArrayList<>();
        for (int r = 1; r < worldSize; r++)
        {
            if (!values.containsKey(StoreProtocol.HEARD_PREFIX + r))
            {
                waiting.add(r);
            }
        }
        return waiting;
    }

    /**
     * Waits until every rank has heard the verdict, the store closed or the time is up; an interrupt ends it.
     *
     * @param worldSize  the job's ranks.
     * @param untilNanos when to stop, as {@link System#nanoTime()}.
     */
    synchronized void awaitHeard(final int worldSize, final long untilNanos)
    {
        long left;
        while (!closed && !notHeard(worldSize).isEmpty() && (left = untilNanos - System.nanoTime()) > 0)
        {
            try
            {
                wait(Math.max(1, left / 1_000_000L));
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The store closed: every wait ends. */
    synchronized void close()
    {
        closed = true;
        notifyAll();
    }

    /** @return the bytes of keys and values held. */
    synchronized long storedBytes()
    {
        return storedBytes;
    }

    /** @return the keys held. */
    synchronized int keyCount()
    {
        return values.size();
    }
}
