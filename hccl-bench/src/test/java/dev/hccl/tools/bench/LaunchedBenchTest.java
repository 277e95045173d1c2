package dev.hccl.tools.bench;

import dev.hccl.tools.launch.HcclRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
    private static final Path REPO = Path.of(System.getProperty("user.dir")).getParent();

    @TempDir
    Path tmp;

    @Test
    void twoProcessesStartedByTheLauncherPrintNcclTestsTableFromRankZero()
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int status = HcclRun.run(new String[]{"-np", "2", "--", JAVA, "-cp", CLASS_PATH,
            "dev.hccl.tools.bench.HcclBench", "all_reduce", "-b", "8", "-e", "64K", "-f", "4", "-n", "5", "-w", "2",
            "-c", "1"},
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

        final String stdout = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, () -> stdout + "\nstderr:\n" + err.toString(StandardCharsets.UTF_8));
        assertTable(stdout, "[0] ");
    }

    @Test
    void theIssuesCommandLineWorksThroughTheScripts() throws Exception
    {
        // A scratch checkout: the real scripts, a stub jar, and a `java` that runs the real JVM on the test class
        // path instead of the stub (so no package phase is needed).
        final Path root = Files.createDirectories(tmp.resolve("repo")).toRealPath();
        final Path bin = Files.createDirectories(root.resolve("bin"));
        for (final String script : List.of("hcclrun", "hccl-bench"))
        {
            Files.copy(REPO.resolve("bin").resolve(script), bin.resolve(script));
            Files.setPosixFilePermissions(bin.resolve(script), PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        final Path jar = root.resolve("hccl-bench/target/hccl-bench-all.jar");
        Files.createDirectories(jar.getParent());
        Files.write(jar, new byte[]{'P', 'K'});
        final Path fakeBin = Files.createDirectories(tmp.resolve("fakebin"));
        final Path java = fakeBin.resolve("java");
        Files.writeString(java, String.join("\n",
            "#!/usr/bin/env bash",
            "args=()",
            "while [ $# -gt 0 ]; do",
            "  if [ \"$1\" = -cp ]; then shift 2; continue; fi",
            "  args+=(\"$1\"); shift",
            "done",
            "exec \"$REAL_JAVA\" -cp \"$TEST_CLASS_PATH\" \"${args[@]}\"",
            ""));
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));

        final ProcessBuilder pb = new ProcessBuilder(bin.resolve("hcclrun").toString(), "-np", "2", "hccl-bench",
            "all_reduce", "-b", "8", "-e", "64K", "-f", "4", "-n", "5", "-w", "2", "-c", "1");
        // Without bin/ on this PATH: the launcher must find hccl-bench through the PATH that hcclrun exports.
        pb.environment().put("PATH", fakeBin + File.pathSeparator + System.getenv("PATH"));
        pb.environment().put("REAL_JAVA", JAVA);
        pb.environment().put("TEST_CLASS_PATH", CLASS_PATH);
        pb.environment().remove("HCCL_LAUNCHER_JAVA_OPTS");
        pb.environment().remove("CLASSPATH");
        final Path stdout = tmp.resolve("out.txt");
        final Path stderr = tmp.resolve("err.txt");
        pb.redirectOutput(stdout.toFile()).redirectError(stderr.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        final Process p = pb.start();
        assertTrue(p.waitFor(100, TimeUnit.SECONDS), "hcclrun did not finish");

        final String text = Files.readString(stdout, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), () -> text + "\nstderr:\n" + read(stderr));
        assertTable(text, "[0] ");
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
        assertTrue(text.get(1).startsWith("# nRanks 2 transport tcp/") && text.get(1).endsWith(
            " minBytes 8 maxBytes 65536 step: 4(factor) warmup iters: 2 iters: 5 validation: 1 average: 1"), text.get(1));
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

    private static String read(final Path file)
    {
        try
        {
            return Files.readString(file, StandardCharsets.UTF_8);
        }
        catch (final IOException ex)
        {
            return ex.toString();
        }
    }
}
