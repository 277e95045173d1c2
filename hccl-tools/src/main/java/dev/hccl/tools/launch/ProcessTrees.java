package dev.hccl.tools.launch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The processes the launcher is stopping: the ranks and everything they started.
 *
 * <p>Descendants are recorded before any signal is sent, because once a rank dies its children
 * are re-parented and {@link ProcessHandle#descendants()} no longer finds them. Handles guard
 * against PID reuse themselves (they remember the start time), so signalling a recorded handle
 * later is safe.
 *
 * <p>Ranks are signalled before their descendants: a rank whose child died first could otherwise
 * run on for a moment, reacting to that death (a {@code wait} returning, a retry, a misleading
 * error message) before its own signal arrives.
 */
final class ProcessTrees
{
    private static final long POLL_MILLIS = 10;

    private final Set<ProcessHandle> roots = ConcurrentHashMap.newKeySet();
    private final Set<ProcessHandle> descendants = ConcurrentHashMap.newKeySet();

    /**
     * Records every live rank and its current descendants.
     *
     * @param ranks the ranks' processes
     */
    void record(Collection<? extends ProcessHandle> ranks)
    {
        for (ProcessHandle rank : ranks)
        {
            if (rank.isAlive())
            {
                rank.descendants().forEach(descendants::add);
                roots.add(rank);
            }
        }
    }

    /**
     * Sends SIGTERM to everything recorded. Uses {@link ProcessHandle#destroy()} rather than
     * {@link Process#destroy()}: the latter also closes our ends of the child's pipes, and the
     * last words of a terminated rank (often the interesting ones) would be lost.
     */
    void terminate()
    {
        roots.forEach(ProcessHandle::destroy);
        descendants.forEach(ProcessHandle::destroy);
    }

    /** Sends SIGKILL to everything recorded that is still alive. */
    void kill()
    {
        kill(roots);
        kill(descendants);
    }

    private static void kill(Set<ProcessHandle> handles)
    {
        for (ProcessHandle h : handles)
        {
            if (!isGone(h))
            {
                h.destroyForcibly();
            }
        }
    }

    /**
     * Waits until everything recorded is gone or the deadline passes.
     *
     * @param deadlineNanos a {@link System#nanoTime()} value
     * @return whether everything is gone
     * @throws InterruptedException when interrupted
     */
    boolean awaitGone(long deadlineNanos) throws InterruptedException
    {
        // Polling, because ProcessHandle.onExit() of a non-child polls too, at 300 ms and up.
        while (true)
        {
            if (roots.stream().allMatch(ProcessTrees::isGone) && descendants.stream().allMatch(ProcessTrees::isGone))
            {
                return true;
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0)
            {
                return false;
            }
            Thread.sleep(Math.min(POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(left) + 1));
        }
    }

    /**
     * Whether a process has terminated. A zombie counts as terminated: an orphaned descendant
     * stays a zombie until its new parent reaps it, and in a container whose PID 1 does not
     * reap, that is forever, though {@link ProcessHandle#isAlive()} still says true.
     *
     * @param h the process
     * @return whether it no longer runs
     */
    static boolean isGone(ProcessHandle h)
    {
        return !h.isAlive() || isZombie(h.pid());
    }

    private static boolean isZombie(long pid)
    {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        try
        {
            String s = Files.readString(stat, StandardCharsets.ISO_8859_1);
            // Format: "pid (comm) S ..."; comm may contain spaces and parentheses.
            int close = s.lastIndexOf(')');
            return close > 0 && close + 2 < s.length() && s.charAt(close + 2) == 'Z';
        }
        catch (final IOException | RuntimeException noProcfs)
        {
            return false;
        }
    }
}
