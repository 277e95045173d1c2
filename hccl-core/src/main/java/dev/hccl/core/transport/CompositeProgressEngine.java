package dev.hccl.core.transport;

import dev.hccl.api.spi.ProgressEngine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The engines of several transports driven as one: an operation whose peers span transports (shared memory within
 * the node, TCP across) is waited for by one thread that makes progress on all of them. One thread at a time
 * drives them all, as one thread drives a single engine; a thread that enters holds every engine or none.
 */
public final class CompositeProgressEngine implements ProgressEngine
{
    private final ProgressEngine[] engines;
    private final boolean wakesOnArrival;
    private final AtomicReference<Thread> owner = new AtomicReference<>();
    /** Reentrant entries of the owner; the owner's alone. */
    private int depth;

    private CompositeProgressEngine(final List<ProgressEngine> engines)
    {
        // An engine that wakes on arrival first: a waiting poll sleeps in it and so wakes when its I/O comes.
        final List<ProgressEngine> ordered = new ArrayList<>(engines);
        ordered.sort((a, b) -> Boolean.compare(b.wakesOnArrival(), a.wakesOnArrival()));
        this.engines = ordered.toArray(new ProgressEngine[0]);
        boolean all = true;
        for (final ProgressEngine engine : this.engines)
        {
            all &= engine.wakesOnArrival();
        }
        this.wakesOnArrival = all;
    }

    /**
     * The engine that drives the given ones.
     *
     * @param engines the transports' engines; none null.
     * @return null when there are none, the engine itself when there is one, else a composite.
     */
    public static ProgressEngine of(final List<ProgressEngine> engines)
    {
        if (engines.isEmpty())
        {
            return null;
        }
        return engines.size() == 1 ? engines.get(0) : new CompositeProgressEngine(engines);
    }

    @Override
    public boolean enter()
    {
        final Thread me = Thread.currentThread();
        if (owner.get() == me)
        {
            depth++;
            return true;
        }
        if (!owner.compareAndSet(null, me))
        {
            return false;
        }
        for (int i = 0; i < engines.length; i++)
        {
            if (!engines[i].enter())
            {
                // Another thread drives that one (outside this composite): hold none, so that nothing waits on a
                // half-driven set.
                for (int j = i - 1; j >= 0; j--)
                {
                    engines[j].exit();
                }
                owner.set(null);
                return false;
            }
        }
        depth = 1;
        return true;
    }

    @Override
    public void exit()
    {
        if (--depth > 0)
        {
            return;
        }
        for (int i = engines.length - 1; i >= 0; i--)
        {
            engines[i].exit();
        }
        owner.set(null);
    }

    /**
     * Polls every engine; when none had anything ready and {@code waitNanos} is positive, waits in the first (one
     * that wakes on arrival, if any) and polls the others once more.
     */
    @Override
    public int poll(final long waitNanos)
    {
        int work = 0;
        for (final ProgressEngine engine : engines)
        {
            work += engine.poll(0);
        }
        if (work > 0 || waitNanos <= 0)
        {
            return work;
        }
        work = engines[0].poll(waitNanos);
        for (int i = 1; i < engines.length; i++)
        {
            work += engines[i].poll(0);
        }
        return work;
    }

    @Override
    public boolean wakesOnArrival()
    {
        return wakesOnArrival;
    }
}
