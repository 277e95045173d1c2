package dev.hccl.api.spi;

import java.util.Objects;

/**
 * Where the library's own threads start (the execution stream, I/O, heartbeat, watch, store, watchdog and rail
 * threads of every module), so that one hook places them all: with {@code HCCL_LIBRARY_CPUS} set, hccl-core installs
 * one that pins the starting thread to those CPUs, off the cores the ranks compute on (oneCCL's
 * {@code CCL_WORKER_AFFINITY}). The hook lives here, in the API that every module shares, and the pinning in hccl-core,
 * which may log. Without a hook a thread's start costs one volatile read. The threads of the user, who calls the
 * collectives, never run it.
 */
public final class LibraryThreads
{
    /** Runs on each library thread as it starts; null when the threads are left where they are. */
    private static volatile Runnable placement;

    private LibraryThreads()
    {
    }

    /**
     * A daemon thread of the library: a transport never closed must not keep the JVM alive.
     *
     * @param task what it runs, after it is placed.
     * @param name its name, {@code hccl-...}.
     * @return the thread, not started.
     */
    public static Thread newThread(final Runnable task, final String name)
    {
        final Thread t = new Thread(placedAtStart(task), name);
        t.setDaemon(true);
        return t;
    }

    /**
     * A task that places its thread first, for threads a module makes itself (Netty's own thread class).
     *
     * @param task what the thread runs.
     * @return the task, placing its thread before it runs.
     */
    public static Runnable placedAtStart(final Runnable task)
    {
        Objects.requireNonNull(task, "task");
        return () ->
        {
            started();
            task.run();
        };
    }

    /**
     * Places the calling thread, a library thread that starts, where the hook says; nothing without a hook.
     */
    public static void started()
    {
        final Runnable p = placement;
        if (p != null)
        {
            p.run();
        }
    }

    /**
     * Sets the hook that places every library thread started from now on; those already running stay where they are.
     *
     * @param hook runs on each starting library thread and never throws; null to leave the threads where they are.
     */
    public static void placeWith(final Runnable hook)
    {
        placement = hook;
    }

    /**
     * Reads a CPU list as {@code taskset -c} and Linux write it ({@code 3}, {@code 2-3,6}), for
     * {@code HCCL_LIBRARY_CPUS}.
     *
     * @param text the list.
     * @return it, without spaces.
     * @throws IllegalArgumentException saying what it must be.
     */
    public static String cpuList(final String text)
    {
        final String list = text.replace(" ", "");
        for (final String part : list.split(",", -1))
        {
            final String[] ends = part.split("-", -1);
            if (ends.length > 2 || !ends[0].matches("\\d{1,5}") || ends.length == 2 && (!ends[1].matches("\\d{1,5}")
                || Integer.parseInt(ends[1]) < Integer.parseInt(ends[0])))
            {
                throw new IllegalArgumentException("must be a list of CPUs as taskset -c takes it, such as 3 or "
                    + "2-3,6");
            }
        }
        return list;
    }
}
