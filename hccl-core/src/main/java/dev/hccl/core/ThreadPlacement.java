package dev.hccl.core;

import dev.hccl.api.CommConfig;
import dev.hccl.api.spi.LibraryThreads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Pins the library's own threads to {@link CommConfig#LIBRARY_CPUS} (oneCCL's {@code CCL_WORKER_AFFINITY}), so that
 * they stay off the cores the ranks compute on: each library thread, as it starts ({@link LibraryThreads}), finds its
 * Linux thread id ({@code /proc/thread-self} reads {@code PID/task/TID}) and runs {@code taskset -p -c LIST TID}, a
 * short-lived process, as nothing native ships. Threads a pinned thread starts inherit its CPUs from the kernel.
 * <p>
 * Placement is the process's, as affinity is: the last communicator created sets it, and threads already running
 * stay where they are. When pinning cannot be done (no taskset, not Linux, CPUs the process may not use) one WARN
 * names the setting and the reason, no thread is pinned from then on, and the job goes on.
 */
final class ThreadPlacement implements Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(ThreadPlacement.class);
    /** How long taskset may take; it takes milliseconds. */
    private static final long TASKSET_TIMEOUT_MILLIS = 10_000;

    private final String cpus;
    private final Path threadSelf;
    private final String taskset;
    private final long timeoutMillis;
    private final AtomicBoolean failed = new AtomicBoolean();

    ThreadPlacement(final String cpus, final Path threadSelf, final String taskset)
    {
        this(cpus, threadSelf, taskset, TASKSET_TIMEOUT_MILLIS);
    }

    /** As the other, with how long taskset may take before the thread goes on unpinned, for tests. */
    ThreadPlacement(final String cpus, final Path threadSelf, final String taskset, final long timeoutMillis)
    {
        this.cpus = cpus;
        this.threadSelf = threadSelf;
        this.taskset = taskset;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * Places the library threads started from now on as the configuration says: pinned to its
     * {@code HCCL_LIBRARY_CPUS}, or, unset, where they are (no hook, no process).
     *
     * @param config the configuration of a communicator about to be created.
     */
    static void configure(final CommConfig config)
    {
        configure(config, Path.of("/proc/thread-self"), "taskset");
    }

    /** As {@link #configure(CommConfig)}, with where the thread id is read and the taskset to run. */
    static void configure(final CommConfig config, final Path threadSelf, final String taskset)
    {
        final String cpus = config.get(CommConfig.LIBRARY_CPUS);
        LibraryThreads.placeWith(cpus == null ? null : new ThreadPlacement(cpus, threadSelf, taskset));
    }

    /** Pins the calling thread; never throws. */
    @Override
    public void run()
    {
        if (failed.get())
        {
            return;
        }
        final String thread = Thread.currentThread().getName();
        try
        {
            final String tid = threadSelf.toRealPath().getFileName().toString();
            final Process p = new ProcessBuilder(taskset, "-p", "-c", cpus, tid).redirectErrorStream(true).start();
            p.getOutputStream().close();
            // Waited for before its output is read, so that the timeout holds; what taskset says fits in the pipe.
            if (!p.waitFor(timeoutMillis, TimeUnit.MILLISECONDS))
            {
                p.destroyForcibly();
                fail(thread, taskset + " did not finish in " + timeoutMillis + " ms");
            }
            else if (p.exitValue() != 0)
            {
                final String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                fail(thread, taskset + " -p -c " + cpus + " " + tid + " exited " + p.exitValue() + ": " + said);
            }
            else
            {
                LOG.debug("thread {} (tid {}) pinned to CPUs {}", thread, tid, cpus);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            fail(thread, ex.toString());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            fail(thread, "interrupted while " + taskset + " ran");
        }
    }

    private void fail(final String thread, final String reason)
    {
        if (failed.compareAndSet(false, true))
        {
            LOG.warn("{}={}: cannot pin the library's threads ({}: {}); they run unpinned. Pinning needs Linux and "
                + "taskset (util-linux), and CPUs this process may use; fix that or unset {}",
                CommConfig.LIBRARY_CPUS.variable(), cpus, thread, reason, CommConfig.LIBRARY_CPUS.variable());
        }
    }
}
