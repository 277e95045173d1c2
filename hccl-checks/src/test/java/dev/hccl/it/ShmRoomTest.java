package dev.hccl.it;

import dev.hccl.bench.check.SelfCheck;
import dev.hccl.tools.launch.HcclRun;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A node whose shared memory is too small, as Docker's default 64 MiB {@code /dev/shm} is for many ranks: a 3 MiB
 * tmpfs holds one pair's segment of three. The pairs that do not fit fall back to TCP with a WARN that names the
 * directory, the bytes needed and what to change; the job neither hangs nor crashes, its results are right, and the
 * tmpfs is left empty. Mounting needs root: as {@link SimulatedClusterTest}, it is skipped without root unless
 * {@code HCCL_TEST_NETNS=required} (set by .ci/run).
 */
@Timeout(300)
class ShmRoomTest
{
    private static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    private static final String CLASS_PATH = System.getProperty("java.class.path");

    private Path mount;
    private boolean mounted;

    @BeforeEach
    void mountASmallTmpfs() throws Exception
    {
        mount = Files.createTempDirectory(RealProcessTest.shmParent(), "hccl-small-");
        final Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=3m,mode=1777", "tmpfs",
            mount.toString()).redirectErrorStream(true).start();
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        mounted = p.waitFor() == 0;
        if (!mounted)
        {
            final String why = "mounting a 3 MiB tmpfs on " + mount + " failed (it needs root): " + output.trim();
            if (!"required".equals(System.getenv(SimulatedClusterTest.REQUIRED_ENV)))
            {
                Assumptions.abort("ShmRoomTest: " + why + "; set " + SimulatedClusterTest.REQUIRED_ENV +
                    "=required to make this a failure, as .ci/run does");
            }
            fail("ShmRoomTest: " + why);
        }
    }

    @AfterEach
    void unmount() throws Exception
    {
        if (mounted)
        {
            new ProcessBuilder("umount", mount.toString()).inheritIO().start().waitFor();
        }
        Files.deleteIfExists(mount);
    }

    @Test
    void pairsThatDoNotFitFallBackToTcpWithAWarningAndTheJobIsRight() throws IOException
    {
        final int n = 3;
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int status = HcclRun.run(new String[]{"-np", Integer.toString(n), "--", "env",
            "HCCL_SHM_DIR=" + mount, JAVA, ProcessJob.QUICK_JIT, "-Xmx256m",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", CLASS_PATH, SelfCheck.class.getName(), "0", "1",
            "7", "1000", "65537"},
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        final String stdout = out.toString(StandardCharsets.UTF_8);
        final String stderr = err.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, () -> "stdout:\n" + stdout + "\nstderr:\n" + stderr);
        assertFalse(stdout.contains("WRONG"), stdout);

        // Each rank's transports, from its summary: "rank R of 3: N collectives over shm+tcp checked ...".
        final Pattern summary = Pattern.compile("rank (\\d) of 3: \\d+ collectives over (\\S+) checked .* 0 failed");
        int ranksOverTcp = 0;
        int ranksSeen = 0;
        for (final String line : stdout.lines().toList())
        {
            final Matcher m = summary.matcher(line);
            if (m.find())
            {
                ranksSeen++;
                ranksOverTcp += m.group(2).contains("tcp") ? 1 : 0;
            }
        }
        assertEquals(n, ranksSeen, stdout);
        assertTrue(ranksOverTcp >= 2, "a pair that did not fit reaches two ranks over TCP:\n" + stdout);

        final String warning = stderr.lines().filter(l -> l.contains("falls back to TCP")).findFirst().orElse("");
        assertTrue(warning.contains("WARN") && warning.contains(mount.toString()) &&
            warning.contains("bytes needed") && warning.contains("HCCL_SHM_DIR") && warning.contains("--shm-size"),
            "the WARN names the directory, the room needed and what to change:\n" + stderr);
        assertEquals(List.of(), RealProcessTest.leftIn(mount), "segments left behind");
    }
}
