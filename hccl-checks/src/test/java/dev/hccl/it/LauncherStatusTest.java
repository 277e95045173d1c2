package dev.hccl.it;

import dev.hccl.tools.launch.HcclRun;
import dev.hccl.tools.status.HcclStatus;
import org.json.JSONObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A job that hcclrun made the token of can still be asked its status (issue 41, point 4): hcclrun keeps the token in a
 * file only the user can read, in a directory only the user can enter, rank 0's INFO line names it in the command
 * that asks ({@code hccl-status --token-file FILE HOST:PORT}), that command answers while the job runs, and once
 * hcclrun exits, the file and its directory are gone.
 */
@Timeout(180)
class LauncherStatusTest
{
    private static final Pattern STATUS = Pattern.compile("hccl-status --token-file (\\S+) (127\\.0\\.0\\.1:\\d+)");

    @Test
    void theTokenHcclrunMadeIsInAPrivateFileThatRankZeroNamesForHcclStatus(@TempDir final Path tmp) throws Exception
    {
        assumeTrue(System.getenv("HCCL_JOB_TOKEN") == null, "hcclrun makes a token only when it is given none");
        final Path stop = tmp.resolve("stop");
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final FutureTask<Integer> launcher = new FutureTask<>(() -> HcclRun.run(new String[] {"-np", "2",
            ProcessJob.JAVA, ProcessJob.QUICK_JIT, "-Xmx128m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            // The line that names the status command is INFO; the rest of the job logs WARN and above.
            "-Dorg.slf4j.simpleLogger.log.dev.hccl.core.HcclProvider=info",
            "-cp", System.getProperty("java.class.path"), UntilFileWorker.class.getName(), stop.toString()},
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)));
        final Thread thread = new Thread(launcher, "hcclrun");
        thread.start();
        try
        {
            final Matcher info = awaitInfoLine(err, out);
            final Path file = Path.of(info.group(1));
            final String at = info.group(2);
            final String outputs = "stdout:\n" + out + "\nstderr:\n" + err;
            assertEquals("rw-------", PosixFilePermissions.toString(
                Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS)), outputs);
            assertEquals("rwx------", PosixFilePermissions.toString(
                Files.getPosixFilePermissions(file.getParent(), LinkOption.NOFOLLOW_LINKS)), outputs);
            assertTrue(Files.readString(file).strip().matches("[0-9a-f]{32}"), "the token hcclrun made");

            // No HCCL_JOB_TOKEN here: the file alone proves the token.
            String[] said = status("--token-file", file.toString(), "--json", at);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!"0".equals(said[2]) && System.nanoTime() < deadline)
            {
                Thread.sleep(200);
                said = status("--token-file", file.toString(), "--json", at);
            }
            assertEquals("0", said[2], said[1] + "\n" + outputs);
            assertEquals(2, new JSONObject(said[0]).getInt("worldSize"), said[0]);

            Files.createFile(stop);
            assertEquals(0, launcher.get(120, TimeUnit.SECONDS), outputs);
            assertFalse(Files.exists(file, LinkOption.NOFOLLOW_LINKS), "the token file outlived hcclrun: " + file);
            assertFalse(Files.exists(file.getParent(), LinkOption.NOFOLLOW_LINKS),
                "its directory outlived hcclrun: " + file.getParent());
            assertEquals(List.of("[0] READY rank 0", "[1] READY rank 1"),
                out.toString(StandardCharsets.UTF_8).lines().sorted().toList());
        }
        finally
        {
            if (!Files.exists(stop))
            {
                Files.createFile(stop);
            }
            thread.join(TimeUnit.SECONDS.toMillis(60));
            if (thread.isAlive())
            {
                // The ranks are wedged: interrupting the launcher kills them.
                thread.interrupt();
            }
        }
    }

    /** Rank 0's INFO line at init, with the status command: the token file and the address. */
    private static Matcher awaitInfoLine(final ByteArrayOutputStream err, final ByteArrayOutputStream out)
        throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline)
        {
            final Matcher m = STATUS.matcher(err.toString(StandardCharsets.UTF_8));
            if (m.find())
            {
                return m;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("rank 0 named no status command within 120 s:\nstdout:\n" + out + "\nstderr:\n" + err);
    }

    /** Runs hccl-status in this JVM, with no HCCL_JOB_TOKEN: its output, its errors and its exit status. */
    private static String[] status(final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int status = HcclStatus.run(new PrintWriter(out, true), new PrintWriter(err, true), Map.of(), args);
        return new String[] {out.toString().trim(), err.toString(), Integer.toString(status)};
    }
}
