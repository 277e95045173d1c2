package dev.hccl.bench;

import dev.hccl.tools.ScriptCheckout;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bin/hccl-bench} and the PATH that {@code bin/hcclrun} exports, in a scratch checkout reached through a
 * symlink, with a fake {@code java} that prints its PATH and then its arguments, one per line.
 */
@Timeout(60)
class BenchScriptTest
{
    private static final Path REPO_BIN = Path.of(System.getProperty("user.dir")).getParent().resolve("bin");
    private static final String FLAG = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED";

    @TempDir
    Path tmp;

    private Path root;
    private Path fakeBin;

    @BeforeEach
    void layOut() throws IOException
    {
        root = Files.createDirectories(tmp.resolve("repo")).toRealPath();
        Files.createDirectories(tmp.resolve("elsewhere"));
        ScriptCheckout.copyScripts(root, List.of("hcclrun", "hccl-bench"));
        for (final String script : List.of("hcclrun", "hccl-bench"))
        {
            Files.createSymbolicLink(tmp.resolve("elsewhere").resolve(script), Path.of("..", "repo", "bin", script));
        }
        fakeBin = Files.createDirectories(tmp.resolve("fakebin"));
        final Path java = fakeBin.resolve("java");
        Files.writeString(java, "#!/bin/sh\nprintf 'PATH=%s\\n' \"$PATH\"\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void hcclBenchRunsTheBenchmarkWithTheFlagAndTheArgumentsIntact() throws Exception
    {
        final Path jar = root.resolve("hccl-dist/target/hccl-tools.jar");
        Files.createDirectories(jar.getParent());
        Files.write(jar, new byte[]{'P', 'K'});

        final List<String> out = run(tmp.resolve("elsewhere/hccl-bench").toString(), "all_reduce", "-b", "8",
            "--plot", "two words.svg");

        // The flag Agrona needs first; other JVM flags (modules the kernels use) may follow it.
        assertEquals(FLAG, out.get(1));
        final int cp = out.indexOf("-cp");
        assertTrue(cp > 1 && out.subList(2, cp).stream().allMatch(a -> a.startsWith("--")), out.toString());
        assertEquals(List.of("-cp", jar.toString(), "dev.hccl.bench.HcclBench", "all_reduce", "-b", "8",
            "--plot", "two words.svg"), out.subList(cp, out.size()));
    }

    @Test
    void hcclBenchWithoutTheJarTellsHowToBuild() throws Exception
    {
        final ProcessBuilder pb = new ProcessBuilder(tmp.resolve("elsewhere/hccl-bench").toString(), "barrier");
        pb.environment().put("PATH", fakeBin + File.pathSeparator + System.getenv("PATH"));
        pb.redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        final Process p = pb.start();
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(20, TimeUnit.SECONDS));

        assertEquals(1, p.exitValue());
        assertEquals("hccl-bench: hccl-dist/target/hccl-tools.jar not found; build first: mvn -q -DskipTests " +
            "-Dmaven.javadoc.skip -Dmaven.source.skip -pl hccl-dist -am package\n", output);
    }

    @Test
    void hcclrunPutsItsOwnBinFirstOnThePathOfTheLauncher() throws Exception
    {
        final Path jar = root.resolve("hccl-dist/target/hccl-tools.jar");
        Files.createDirectories(jar.getParent());
        Files.write(jar, new byte[]{'P', 'K'});

        final List<String> out = run(tmp.resolve("elsewhere/hcclrun").toString(), "-np", "2", "hccl-bench", "barrier");

        assertEquals("PATH=" + root.resolve("bin") + File.pathSeparator + fakeBin + File.pathSeparator +
            System.getenv("PATH"), out.get(0));
        assertEquals(List.of("-cp", jar.toString(), "dev.hccl.tools.launch.HcclRun", "-np", "2", "hccl-bench",
            "barrier"), out.subList(1, out.size()));
    }

    private List<String> run(final String... command) throws Exception
    {
        final ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("PATH", fakeBin + File.pathSeparator + System.getenv("PATH"));
        pb.environment().remove("HCCL_LAUNCHER_JAVA_OPTS");
        pb.environment().remove("CLASSPATH");
        final Path out = tmp.resolve("out.txt");
        final Path err = tmp.resolve("err.txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        final Process p = pb.start();
        assertTrue(p.waitFor(20, TimeUnit.SECONDS), "script did not finish");
        assertEquals(0, p.exitValue(), Files.readString(err, StandardCharsets.UTF_8));
        return Files.readAllLines(out, StandardCharsets.UTF_8);
    }
}
