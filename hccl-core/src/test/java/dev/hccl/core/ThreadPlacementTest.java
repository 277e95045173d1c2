package dev.hccl.core;

import dev.hccl.api.CommConfig;
import dev.hccl.api.spi.LibraryThreads;
import dev.hccl.api.testing.Tee;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code HCCL_LIBRARY_CPUS}: each library thread asks {@code taskset} to pin its own thread id as it starts, a failure
 * says so once and pins nothing more, the setting unset installs nothing, and on Linux a thread really lands there.
 */
class ThreadPlacementTest
{
    @TempDir
    Path dir;

    @AfterEach
    void noPlacement()
    {
        LibraryThreads.placeWith(null);
    }

    /** A taskset that appends its arguments to a file and exits {@code status}. */
    private Path fakeTaskset(final int status) throws Exception
    {
        final Path script = dir.resolve("taskset");
        Files.writeString(script, "#!/bin/sh\necho \"$@\" >> " + dir.resolve("calls") + "\nexit " + status + "\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    private List<String> calls() throws Exception
    {
        final Path calls = dir.resolve("calls");
        return Files.exists(calls) ? Files.readAllLines(calls) : List.of();
    }

    /** Starts a library thread that records its own thread id, and waits for it. */
    private static String libraryThreadTid() throws Exception
    {
        final AtomicReference<String> tid = new AtomicReference<>();
        final Thread t = LibraryThreads.newThread(() -> tid.set(tidOfThisThread()), "hccl-test");
        t.start();
        t.join();
        return tid.get();
    }

    private static String tidOfThisThread()
    {
        try
        {
            return Path.of("/proc/thread-self").toRealPath().getFileName().toString();
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    @Test
    void eachLibraryThreadPinsItsOwnThreadIdAsItStarts() throws Exception
    {
        assumeTrue(Files.exists(Path.of("/proc/thread-self")), "Linux's /proc/thread-self");
        LibraryThreads.placeWith(new ThreadPlacement("2-3,6", Path.of("/proc/thread-self"),
            fakeTaskset(0).toString()));
        final String first = libraryThreadTid();
        final String second = libraryThreadTid();
        assertEquals(List.of("-p -c 2-3,6 " + first, "-p -c 2-3,6 " + second), calls());
        // The caller's own thread is not a library thread: nothing pins it.
        final AtomicReference<String> mine = new AtomicReference<>();
        final Thread users = new Thread(() -> mine.set(tidOfThisThread()));
        users.start();
        users.join();
        assertEquals(2, calls().size());
    }

    @Test
    void aFailureWarnsOnceNamingTheSettingAndPinsNothingMore() throws Exception
    {
        assumeTrue(Files.exists(Path.of("/proc/thread-self")), "Linux's /proc/thread-self");
        LibraryThreads.placeWith(new ThreadPlacement("7", Path.of("/proc/thread-self"), fakeTaskset(1).toString()));
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final PrintStream stderr = System.err;
        System.setErr(new PrintStream(new Tee(stderr, captured), true, StandardCharsets.UTF_8));
        try
        {
            libraryThreadTid();
            libraryThreadTid();
        }
        finally
        {
            System.setErr(stderr);
        }
        assertEquals(1, calls().size(), "taskset is not tried again after it failed");
        final String log = captured.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("HCCL_LIBRARY_CPUS=7: cannot pin the library's threads") && log.contains("exited 1")
            && log.contains("unset HCCL_LIBRARY_CPUS"), log);
        assertEquals(log.indexOf("cannot pin"), log.lastIndexOf("cannot pin"), "one WARN: " + log);
    }

    /** A taskset that never ends holds a library thread's start up for the timeout, not for ever. */
    @Test
    void aTasksetThatHangsIsGivenUpAndTheThreadGoesOn() throws Exception
    {
        assumeTrue(Files.exists(Path.of("/proc/thread-self")), "Linux's /proc/thread-self");
        final Path script = dir.resolve("taskset");
        Files.writeString(script, "#!/bin/sh\necho \"$@\" >> " + dir.resolve("calls") + "\nexec sleep 60\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        LibraryThreads.placeWith(new ThreadPlacement("0", Path.of("/proc/thread-self"), script.toString(), 300));
        final long start = System.nanoTime();
        final String tid = libraryThreadTid();
        final double seconds = (System.nanoTime() - start) / 1e9;
        assertTrue(tid != null && seconds < 30, "the thread ran after " + seconds + " s");
        libraryThreadTid();
        assertEquals(1, calls().size(), "a hung taskset is not tried again");
    }

    @Test
    void aMissingTasksetOrProcIsAWarningNotAFailure() throws Exception
    {
        LibraryThreads.placeWith(new ThreadPlacement("0", dir.resolve("no-proc"), dir.resolve("none").toString()));
        final AtomicReference<String> ran = new AtomicReference<>();
        final Thread t = LibraryThreads.newThread(() -> ran.set("ran"), "hccl-test");
        t.start();
        t.join();
        assertEquals("ran", ran.get(), "the thread goes on unpinned");
    }

    @Test
    void theSettingInstallsThePlacementAndUnsetLeavesNewThreadsAlone() throws Exception
    {
        assumeTrue(Files.exists(Path.of("/proc/thread-self")), "Linux's /proc/thread-self");
        final String taskset = fakeTaskset(0).toString();
        ThreadPlacement.configure(config(Map.of()), Path.of("/proc/thread-self"), taskset);
        libraryThreadTid();
        assertEquals(List.of(), calls(), "unset: no process spawned");
        ThreadPlacement.configure(config(Map.of("HCCL_LIBRARY_CPUS", "1, 3")), Path.of("/proc/thread-self"), taskset);
        final String tid = libraryThreadTid();
        assertEquals(List.of("-p -c 1,3 " + tid), calls());
        ThreadPlacement.configure(config(Map.of()), Path.of("/proc/thread-self"), taskset);
        libraryThreadTid();
        assertEquals(1, calls().size(), "a later communicator without the setting leaves new threads where they are");
    }

    @Test
    void aCpuListThatIsNotOneSaysWhatItMustBe()
    {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> config(Map.of("HCCL_LIBRARY_CPUS", "3-1")));
        assertTrue(e.getMessage().contains("HCCL_LIBRARY_CPUS must be a list of CPUs as taskset -c takes it, such as 3 "
            + "or 2-3,6, got '3-1'"), e.getMessage());
        for (final String bad : List.of("a", "1,", "-2", "1-2-3", "1;2"))
        {
            assertThrows(IllegalArgumentException.class, () -> config(Map.of("HCCL_LIBRARY_CPUS", bad)), bad);
        }
        assertEquals("0-1,4", config(Map.of("HCCL_LIBRARY_CPUS", "0-1,4")).get(CommConfig.LIBRARY_CPUS));
    }

    @Test
    void aLibraryThreadLandsOnTheCpuGivenOnLinux() throws Exception
    {
        assumeTrue(Files.exists(Path.of("/proc/thread-self")), "Linux's /proc/thread-self");
        final String allowed = cpusAllowed("/proc/self/status");
        final String last = allowed.substring(Math.max(allowed.lastIndexOf(','), allowed.lastIndexOf('-')) + 1);
        assumeTrue(canRun("taskset", "-V"), "taskset (util-linux)");
        ThreadPlacement.configure(config(Map.of("HCCL_LIBRARY_CPUS", last)));
        final AtomicReference<String> seen = new AtomicReference<>();
        final Thread t = LibraryThreads.newThread(() -> seen.set(cpusAllowed("/proc/thread-self/status")), "hccl-t");
        t.start();
        t.join();
        assertEquals(last, seen.get());
        assertEquals(allowed, cpusAllowed("/proc/thread-self/status"), "the caller's thread stays where it was");
    }

    private static String cpusAllowed(final String status)
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of(status)))
            {
                if (line.startsWith("Cpus_allowed_list:"))
                {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
            return null;
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    private static boolean canRun(final String... command)
    {
        try
        {
            return new ProcessBuilder(command).redirectErrorStream(true).start().waitFor() == 0;
        }
        catch (final Exception ex)
        {
            return false;
        }
    }

    private static CommConfig config(final Map<String, String> env)
    {
        return CommConfig.builder().environment(env).conclude();
    }
}
