package dev.hccl.bench;

import dev.hccl.tools.ScriptCheckout;
import dev.hccl.tools.launch.HcclRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The benchmark in real processes over TCP, started by the launcher: in-process through {@link HcclRun#run}, and as
 * users type it, {@code bin/hcclrun -np 2 hccl-bench ...}, with the command found by name on the PATH that
 * {@code bin/hcclrun} extends.
 */
@Timeout(120)
class LaunchedBenchTest
{
    private static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    private static final String CLASS_PATH = System.getProperty("java.class.path");

    @TempDir
    Path tmp;

    @Test
    void twoProcessesStartedByTheLauncherPrintNcclTestsTableFromRankZero()
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int status = HcclRun.run(new String[]{"-np", "2", "--", JAVA, "-cp", CLASS_PATH,
            "dev.hccl.bench.HcclBench", "all_reduce", "-b", "8", "-e", "64K", "-f", "4", "-n", "5", "-w", "2",
            "-c", "1"},
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

        final String stdout = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, () -> stdout + "\nstderr:\n" + err.toString(StandardCharsets.UTF_8));
        assertTable(stdout, "[0] ");
    }

    @Test
    void theIssuesCommandLineWorksThroughTheScripts() throws Exception
    {
        // The real scripts, as a user runs them: the launcher must find hccl-bench through the PATH it exports.
        final ScriptCheckout.Run run = ScriptCheckout.hcclrun(tmp, "hccl-bench", "-np", "2", "hccl-bench", "all_reduce", "-b", "8", "-e", "64K", "-f", "4", "-n", "5", "-w", "2", "-c", "1");
        assertEquals(0, run.status(), () -> run.stdout() + "\nstderr:\n" + run.stderr());
        assertTable(run.stdout(), "[0] ");
    }

    /**
     * Checks a launched run's output: every line from rank 0, the header, 7 rows (8 B to 32 KiB in steps of 4) with
     * nothing wrong, and the footer.
     */
    private static void assertTable(final String stdout, final String prefix)
    {
        final List<String> lines = stdout.lines().collect(Collectors.toList());
        assertTrue(lines.stream().allMatch(l -> l.startsWith(prefix)), "only rank 0 prints:\n" + stdout);
        final List<String> text = lines.stream().map(l -> l.substring(prefix.length())).collect(Collectors.toList());
        assertEquals("# Collective test starting: hccl-bench all_reduce", text.get(0));
        assertTrue(text.get(1).startsWith("# nRanks 2 transport shm ") && text.get(1).endsWith(
            " minBytes 8 maxBytes 65536 step: 4(factor) warmup iters: 2 iters: 5 validation: 1 average: 1 registered: 0"),
            text.get(1));
        final List<String> rankLines = text.stream().filter(l -> l.startsWith("#  Rank ")).collect(Collectors.toList());
        assertEquals(2, rankLines.size(), stdout);
        assertNotEquals(pid(rankLines.get(0)), pid(rankLines.get(1)), "two processes:\n" + stdout);
        assertTrue(text.containsAll(Table.header()), stdout);

        final List<String[]> rows = new ArrayList<>();
        text.stream().filter(l -> !l.startsWith("#")).forEach(l -> rows.add(l.trim().split(" +")));
        assertEquals(7, rows.size(), stdout);
        long size = 8;
        for (final String[] row : rows)
        {
            assertEquals(13, row.length, String.join(" ", row));
            assertEquals(List.of(Long.toString(size), Long.toString(size / 4), "float", "sum", "-1"),
                List.of(row[0], row[1], row[2], row[3], row[4]));
            assertEquals("0", row[8], "out-of-place #wrong");
            assertEquals("0", row[12], "in-place #wrong");
            assertTrue(Double.parseDouble(row[5]) > 0 && Double.parseDouble(row[9]) > 0, "times");
            size *= 4;
        }
        assertEquals("# Out of bounds values : 0 OK", text.get(text.size() - 3));
        assertTrue(text.get(text.size() - 2).matches("# Avg bus bandwidth    : [0-9.e+-]+"), text.get(text.size() - 2));
        assertEquals("#", text.get(text.size() - 1));
    }

    private static String pid(final String rankLine)
    {
        return rankLine.replaceAll(".* Pid +(\\d+) .*", "$1");
    }
}
