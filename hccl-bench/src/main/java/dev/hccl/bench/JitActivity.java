package dev.hccl.bench;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * How much work this JVM's JIT compilers have done, for {@link Settling}: whether they worked while a batch ran.
 * <p>
 * A compilation's time is counted by the JVM ({@link CompilationMXBean}) only once it has finished, and the
 * optimising compiler of an operation's whole path takes 100 ms and more while the ranks hold every core: a batch
 * that runs meanwhile counts no compilation, yet runs the slower code of the tier before, and a few such batches in
 * a row passed for settled. So on Linux this reads the CPU time the compiler threads have run
 * ({@code /proc/self/task/TID/schedstat}, nanoseconds, for the tasks HotSpot names {@code C1 CompilerThreadN} and
 * {@code C2 CompilerThreadN}), which grows while a compilation is under way. Elsewhere, or where no such thread is
 * found (another JVM), it falls back to the JVM's finished compilation time. A reading allocates: it is taken
 * between batches, never inside one.
 */
final class JitActivity
{
    private static final Path TASKS = Path.of("/proc/self/task");
    /** What HotSpot's compiler threads are named, as the kernel keeps the first 15 bytes. */
    private static final String C1 = "C1 CompilerThre";
    private static final String C2 = "C2 CompilerThre";

    private JitActivity()
    {
    }

    /**
     * @return how much work this JVM's JIT has done so far, to compare with a later reading.
     */
    static Reading read()
    {
        final Map<String, Long> threads = compilerThreads();
        if (null != threads)
        {
            return new Reading(threads, 0);
        }
        final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return new Reading(Map.of(), jit != null && jit.isCompilationTimeMonitoringSupported() ?
            jit.getTotalCompilationTime() * 1_000_000 : 0);
    }

    /**
     * @return each compiler thread's CPU nanoseconds so far, by task id; null where none can be read.
     */
    static Map<String, Long> compilerThreads()
    {
        if (!Files.isDirectory(TASKS))
        {
            return null;
        }
        final Map<String, Long> threads = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS))
        {
            for (final Path task : tasks)
            {
                final long ran = compilerNanos(task);
                if (ran >= 0)
                {
                    threads.put(task.getFileName().toString(), ran);
                }
            }
        }
        catch (final IOException | SecurityException e)
        {
            return null;
        }
        return threads.isEmpty() ? null : threads;
    }

    /** The task's run time when it is a compiler thread, else -1 (also when it ended while read). */
    private static long compilerNanos(final Path task)
    {
        try
        {
            final String name = Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).strip();
            if (!name.startsWith(C1) && !name.startsWith(C2))
            {
                return -1;
            }
            final String schedstat = Files.readString(task.resolve("schedstat"), StandardCharsets.US_ASCII);
            final int end = schedstat.indexOf(' ');
            return Long.parseLong(end < 0 ? schedstat.strip() : schedstat.substring(0, end));
        }
        catch (final IOException | NumberFormatException e)
        {
            // Also a task that ended while it was read (NoSuchFileException).
            return -1;
        }
    }

    /**
     * One reading: the compiler threads' run times, or the JVM's finished compilation time where they are unknown.
     *
     * @param threads        CPU nanoseconds by compiler thread, or empty.
     * @param finishedNanos  the JVM's compilation time, where {@code threads} is empty.
     */
    record Reading(Map<String, Long> threads, long finishedNanos)
    {
        /**
         * @param later a reading taken after this one.
         * @return the JIT's work between the two, in nanoseconds: what each compiler thread of both readings ran
         * meanwhile, and all a thread started meanwhile ran (HotSpot starts and ends compiler threads as its queue
         * grows and shrinks).
         */
        long workUntil(final Reading later)
        {
            if (threads.isEmpty() || later.threads.isEmpty())
            {
                return Math.max(0, later.finishedNanos - finishedNanos);
            }
            long work = 0;
            for (final Map.Entry<String, Long> thread : later.threads.entrySet())
            {
                work += thread.getValue() - threads.getOrDefault(thread.getKey(), 0L);
            }
            return work;
        }
    }
}
