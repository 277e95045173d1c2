package dev.hccl.tools.launch;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/** Test helpers: run the launcher in-process, and look at processes from the outside. */
final class Launches
{
    private Launches()
    {
    }

    /** What one in-process launch produced. */
    record Result(int status, String out, String err, Duration elapsed)
    {
        List<String> outLines()
        {
            return out.lines().collect(Collectors.toList());
        }

        List<String> errLines()
        {
            return err.lines().collect(Collectors.toList());
        }

        List<String> sortedOutLines()
        {
            return out.lines().sorted().collect(Collectors.toList());
        }

        List<String> sortedErrLines()
        {
            return err.lines().sorted().collect(Collectors.toList());
        }
    }

    static Result launch(String... args)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        int status;
        try (PrintStream o = new PrintStream(out, false, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, false, StandardCharsets.UTF_8))
             {
            status = HcclRun.run(args, o, e);
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - t0);
        return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8),
                elapsed);
    }

    /**
     * Whether the process with this PID is still running. Written independently of the
     * launcher's own check on purpose; a zombie (dead, not yet reaped by its new parent) counts
     * as not running.
     */
    static boolean running(long pid)
    {
        return ProcessHandle.of(pid).map(h -> h.isAlive() && !zombie(pid)).orElse(false);
    }

    private static boolean zombie(long pid)
    {
        try
        {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        }
        catch (final IOException gone)
        {
            return false;
        }
    }

    /** Reads a PID that a rank wrote to a file. */
    static long pid(Path file) throws IOException
    {
        return Long.parseLong(Files.readString(file).trim());
    }

    /** Waits until every file exists and is non-empty, or fails after the timeout. */
    static void awaitFiles(Duration timeout, Path... files) throws InterruptedException, IOException
    {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Path f : files)
        {
            while (!Files.exists(f) || Files.readString(f).isBlank())
            {
                if (System.nanoTime() > deadline)
                {
                    throw new AssertionError("not written within " + timeout + ": " + f);
                }
                Thread.sleep(20);
            }
        }
    }
}
