package dev.hccl.tools;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Test support: runs the project's real launcher scripts as a user would ({@code bin/hcclrun -np 2 hccl-bench ...}),
 * from a scratch checkout holding the scripts, a stub jar, and a {@code java} that runs the real JVM on the test class
 * path instead of the stub, so that no package phase is needed. The scratch {@code bin/} is not on the PATH: the
 * launcher must find the tool through the PATH it exports.
 */
public final class ScriptCheckout
{
    private static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    private static final String CLASS_PATH = System.getProperty("java.class.path");
    private static final Path REPO = Path.of(System.getProperty("user.dir")).getParent();
    private static final long WAIT_SECONDS = 100;

    private ScriptCheckout()
    {
    }

    /**
     * What a run printed.
     *
     * @param status the launcher's exit status.
     * @param stdout its standard output.
     * @param stderr its standard error.
     */
    public record Run(int status, String stdout, String stderr)
    {
    }

    /**
     * Runs {@code bin/hcclrun} with the given arguments from a scratch checkout under {@code tmp}.
     *
     * @param tmp         a fresh directory.
     * @param tool        the script besides {@code hcclrun} to copy, such as {@code hccl-bench}.
     * @param hcclrunArgs the launcher's arguments.
     * @return what it printed.
     * @throws Exception when the scratch checkout cannot be made or the run does not finish.
     */
    public static Run hcclrun(final Path tmp, final String tool, final String... hcclrunArgs) throws Exception
    {
        final Path root = Files.createDirectories(tmp.resolve("repo")).toRealPath();
        final Path bin = copyScripts(root, List.of("hcclrun", tool));
        final Path jar = root.resolve("hccl-dist/target/hccl-tools.jar");
        Files.createDirectories(jar.getParent());
        Files.write(jar, new byte[]{'P', 'K'});
        // A JDK whose java runs the real one on the test class path: JAVA_HOME points to it, as the scripts take
        // JAVA_HOME's java first, and its release file is the real JDK's, which the scripts read the version from.
        final Path fakeJdk = Files.createDirectories(tmp.resolve("fakejdk"));
        final Path fakeBin = Files.createDirectories(fakeJdk.resolve("bin"));
        final Path release = Paths.get(System.getProperty("java.home"), "release");
        if (Files.exists(release))
        {
            Files.copy(release, fakeJdk.resolve("release"));
        }
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

        final List<String> command = new ArrayList<>();
        command.add(bin.resolve("hcclrun").toString());
        command.addAll(List.of(hcclrunArgs));
        final ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("PATH", fakeBin + File.pathSeparator + System.getenv("PATH"));
        pb.environment().put("JAVA_HOME", fakeJdk.toString());
        pb.environment().put("REAL_JAVA", JAVA);
        pb.environment().put("TEST_CLASS_PATH", CLASS_PATH);
        // What the user's shell may hold must not reach the job: JVM options (the JVM notes them on stderr) and
        // hccl-java's settings.
        pb.environment().keySet().removeIf(name -> name.startsWith("HCCL_") || name.equals("CLASSPATH") ||
            name.equals("JDK_JAVA_OPTIONS") || name.equals("JAVA_TOOL_OPTIONS"));
        final Path stdout = tmp.resolve("out.txt");
        final Path stderr = tmp.resolve("err.txt");
        pb.redirectOutput(stdout.toFile()).redirectError(stderr.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        final Process p = pb.start();
        assertTrue(p.waitFor(WAIT_SECONDS, TimeUnit.SECONDS), "hcclrun did not finish within " + WAIT_SECONDS + " s");
        return new Run(p.exitValue(), read(stdout), read(stderr));
    }

    /**
     * Copies launcher scripts into a scratch checkout's {@code bin/}, with {@code bin/lib/}, which every script
     * sources.
     *
     * @param root    the scratch checkout.
     * @param scripts the scripts, such as {@code hcclrun}.
     * @return the scratch {@code bin/}.
     * @throws IOException when a copy fails.
     */
    public static Path copyScripts(final Path root, final List<String> scripts) throws IOException
    {
        final Path bin = Files.createDirectories(root.resolve("bin"));
        Files.createDirectories(bin.resolve("lib"));
        Files.copy(REPO.resolve("bin/lib/java.sh"), bin.resolve("lib/java.sh"));
        for (final String script : scripts)
        {
            Files.copy(REPO.resolve("bin").resolve(script), bin.resolve(script));
            Files.setPosixFilePermissions(bin.resolve(script), PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return bin;
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
