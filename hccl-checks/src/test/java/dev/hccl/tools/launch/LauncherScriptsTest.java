package dev.hccl.tools.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/hcclrun} and {@code bin/hccl-java}, copied into a scratch repository layout and run
 * through chained relative symlinks, with a fake {@code java} on the PATH that prints its
 * arguments one per line (and, asked for {@code -version}, the version in {@code FAKE_JAVA_VERSION}),
 * or a fake JDK in {@code JAVA_HOME} whose {@code release} file names its version.
 */
class LauncherScriptsTest
{
    /** Maven runs tests in the module directory; the scripts live in the repository's bin/. */
    private static final Path REPO_BIN = Path.of(System.getProperty("user.dir")).getParent().resolve("bin");

    private static final String JAR_REL = "hccl-dist/target/hccl-tools.jar";

    private static final String MISSING_JAR =
            " hccl-dist/target/hccl-tools.jar not found; build first: mvn -q -DskipTests -Dmaven.javadoc.skip " +
            "-Dmaven.source.skip -pl hccl-dist -am package\n";

    private static final String FLAG = "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED";

    private static final Set<PosixFilePermission> EXECUTABLE = PosixFilePermissions.fromString("rwxr-xr-x");

    @TempDir
    Path tmp;

    private Path root;
    private Path fakeBin;

    @BeforeEach
    void layOut() throws IOException
    {
        root = Files.createDirectories(tmp.resolve("repo")).toRealPath();
        Files.createDirectories(root.resolve("bin"));
        Files.createDirectories(root.resolve("bin/lib"));
        Files.copy(REPO_BIN.resolve("lib/java.sh"), root.resolve("bin/lib/java.sh"));
        for (String script : List.of("hcclrun", "hccl-java", "hccl-trace", "hccl-topo"))
        {
            Path src = REPO_BIN.resolve(script);
            assertTrue(Files.isExecutable(src), src + " must exist and be executable");
            Files.copy(src, root.resolve("bin").resolve(script));
            Files.setPosixFilePermissions(root.resolve("bin").resolve(script), EXECUTABLE);
            // tmp/a/<script> -> ../b/<script> -> ../repo/bin/<script>
            Files.createDirectories(tmp.resolve("a"));
            Files.createDirectories(tmp.resolve("b"));
            Files.createSymbolicLink(tmp.resolve("b").resolve(script), Path.of("..", "repo", "bin", script));
            Files.createSymbolicLink(tmp.resolve("a").resolve(script), Path.of("..", "b", script));
        }
        fakeBin = Files.createDirectories(tmp.resolve("fakebin"));
        Path java = fakeBin.resolve("java");
        Files.writeString(java, "#!/bin/sh\n"
                + "if [ \"$1\" = -version ]; then\n"
                + "  echo \"openjdk version \\\"${FAKE_JAVA_VERSION:-17.0.2}\\\" 2022-01-18\" >&2; exit 0\n"
                + "fi\n"
                + "for a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
        Files.setPosixFilePermissions(java, EXECUTABLE);
    }

    /** A JDK directory whose java prints a marker line, then its arguments; its version is in its release file. */
    private Path fakeJdk(String version) throws IOException
    {
        Path home = Files.createDirectories(tmp.resolve("jdk-" + version));
        Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"fake\"\nJAVA_VERSION=\"" + version + "\"\n");
        Path java = Files.createDirectories(home.resolve("bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\necho JAVA_HOME-java\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
        Files.setPosixFilePermissions(java, EXECUTABLE);
        return home;
    }

    /**
     * A JDK whose java prints what a rank's JVM would take from the environment (JDK_JAVA_OPTIONS, or {@code <unset>};
     * the launcher's note of what it appended), then its arguments.
     */
    private Path fakeJdkShowingOptions() throws IOException
    {
        Path home = fakeJdk("17.0.2");
        Files.writeString(home.resolve("bin/java"), "#!/bin/sh\n"
                + "echo \"JDK_JAVA_OPTIONS=${JDK_JAVA_OPTIONS-<unset>}\"\n"
                + "echo \"ADDED=${" + RankEnvironment.ADDED_VARIABLE + "-<unset>}\"\n"
                + "for a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
        return home;
    }

    private record Run(int status, List<String> out, String err)
    {
    }

    private Run run(Map<String, String> extraEnv, boolean dropClasspath, String... cmd) throws Exception
    {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("PATH", fakeBin + ":" + System.getenv("PATH"));
        pb.environment().remove("HCCL_LAUNCHER_JAVA_OPTS");
        // Maven may run this test with JAVA_HOME set; the scripts must take the fake java from PATH.
        pb.environment().remove("JAVA_HOME");
        if (dropClasspath)
        {
            pb.environment().remove("CLASSPATH");
        }
        pb.environment().putAll(extraEnv);
        Path out = tmp.resolve("out.txt");
        Path err = tmp.resolve("err.txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Process p = pb.start();
        assertTrue(p.waitFor(20, TimeUnit.SECONDS), "script did not finish");
        return new Run(p.exitValue(), new ArrayList<>(Files.readAllLines(out, StandardCharsets.UTF_8)),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    private void createJar() throws IOException
    {
        Path jar = root.resolve(JAR_REL);
        Files.createDirectories(jar.getParent());
        Files.write(jar, new byte[] {'P', 'K'});
    }

    @Test
    @Timeout(30)
    void hcclrunWithoutTheJarTellsHowToBuild() throws Exception
    {
        Run r = run(Map.of(), true, tmp.resolve("a/hcclrun").toString(), "-np", "2", "true");

        assertEquals(1, r.status());
        assertEquals("hcclrun:" + MISSING_JAR, r.err());
        assertEquals(List.of(), r.out());
    }

    @Test
    @Timeout(30)
    void hcclJavaWithoutTheJarTellsHowToBuild() throws Exception
    {
        Run r = run(Map.of(), true, tmp.resolve("a/hccl-java").toString(), "Main");

        assertEquals(1, r.status());
        assertEquals("hccl-java:" + MISSING_JAR, r.err());
    }

    @Test
    @Timeout(30)
    void hcclrunExecsJavaWithTheLauncherMainAndTheArgumentsIntact() throws Exception
    {
        createJar();

        Run r = run(Map.of("HCCL_LAUNCHER_JAVA_OPTS", "-Xmx64m -Dx=y"), true,
                tmp.resolve("a/hcclrun").toString(), "-np", "2", "--", "echo", "two words", "");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of("-Xmx64m", "-Dx=y", "-cp", root.resolve(JAR_REL).toString(),
                "dev.hccl.tools.launch.HcclRun", "-np", "2", "--", "echo", "two words", ""), r.out());
    }

    @Test
    @Timeout(30)
    void hcclrunWithoutLauncherOptionsPassesNoEmptyArgument() throws Exception
    {
        createJar();

        Run r = run(Map.of(), true, tmp.resolve("a/hcclrun").toString(), "--version");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of("-cp", root.resolve(JAR_REL).toString(), "dev.hccl.tools.launch.HcclRun", "--version"),
                r.out());
    }

    /** The vector reduction kernels need the incubator module; bin/hccl-java adds it after the add-opens flag. */
    private static final String VECTOR_MODULE = "--add-modules=jdk.incubator.vector";

    /** Every JDK gets it (17 has the option); JDK 24+ warn without it when Netty loads its native library. */
    private static final String NATIVE_ACCESS = "--enable-native-access=ALL-UNNAMED";

    /** JDK 24+ only: JDK 17 to 22 refuse it. */
    private static final String UNSAFE_ACCESS = "--sun-misc-unsafe-memory-access=allow";

    /** JDK 17 only (the fake java's default version): its foreign linker; other JDKs lack the module. */
    private static final String FOREIGN_MODULE = "--add-modules=jdk.incubator.foreign";

    @Test
    @Timeout(30)
    void hcclJavaAddsTheFlagAndAppendsClasspath() throws Exception
    {
        createJar();
        String jar = root.resolve(JAR_REL).toString();

        Run with = run(Map.of("CLASSPATH", "/opt/app.jar:/opt/lib/*"), false,
                tmp.resolve("a/hccl-java").toString(), "dev.hccl.examples.AllReduceExample", "--size", "1 MiB");
        Run without = run(Map.of(), true, tmp.resolve("a/hccl-java").toString(), "Main");

        assertEquals(0, with.status(), with.err());
        assertEquals(List.of(FLAG, VECTOR_MODULE, NATIVE_ACCESS, FOREIGN_MODULE, "-cp",
                jar + ":/opt/app.jar:/opt/lib/*", "dev.hccl.examples.AllReduceExample", "--size", "1 MiB"), with.out());
        assertEquals(0, without.status(), without.err());
        assertEquals(List.of(FLAG, VECTOR_MODULE, NATIVE_ACCESS, FOREIGN_MODULE, "-cp", jar, "Main"), without.out());
    }

    @Test
    @Timeout(30)
    void hcclJavaTakesJavaHomesJavaAndTheFlagsOfItsVersion() throws Exception
    {
        createJar();
        String jar = root.resolve(JAR_REL).toString();
        String script = tmp.resolve("a/hccl-java").toString();

        Run jdk25 = run(Map.of("JAVA_HOME", fakeJdk("25.0.1").toString()), true, script, "Main");
        Run jdk21 = run(Map.of("JAVA_HOME", fakeJdk("21.0.5").toString()), true, script, "Main");
        Run jdk17 = run(Map.of("JAVA_HOME", fakeJdk("17.0.15").toString()), true, script, "Main");

        assertEquals(0, jdk25.status(), jdk25.err());
        assertEquals(List.of("JAVA_HOME-java", FLAG, VECTOR_MODULE, NATIVE_ACCESS, UNSAFE_ACCESS, "-cp", jar, "Main"),
                jdk25.out());
        assertEquals(0, jdk21.status(), jdk21.err());
        assertEquals(List.of("JAVA_HOME-java", FLAG, VECTOR_MODULE, NATIVE_ACCESS, "-cp", jar, "Main"), jdk21.out());
        assertEquals(0, jdk17.status(), jdk17.err());
        assertEquals(List.of("JAVA_HOME-java", FLAG, VECTOR_MODULE, NATIVE_ACCESS, FOREIGN_MODULE, "-cp", jar, "Main"),
                jdk17.out());
    }

    @Test
    @Timeout(30)
    void withoutAReleaseFileTheVersionComesFromJavaVersion() throws Exception
    {
        createJar();
        String jar = root.resolve(JAR_REL).toString();

        Run r = run(Map.of("FAKE_JAVA_VERSION", "24"), true, tmp.resolve("a/hccl-java").toString(), "Main");
        // Taken for 17, but without the module only JDK 17 has: a JDK without it would not start.
        Run unknown = run(Map.of("FAKE_JAVA_VERSION", "unknown"), true, tmp.resolve("a/hccl-java").toString(), "Main");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of(FLAG, VECTOR_MODULE, NATIVE_ACCESS, UNSAFE_ACCESS, "-cp", jar, "Main"), r.out());
        assertEquals(0, unknown.status(), unknown.err());
        assertTrue(unknown.err().contains("cannot tell the version"), unknown.err());
        assertEquals(List.of(FLAG, VECTOR_MODULE, NATIVE_ACCESS, "-cp", jar, "Main"), unknown.out());
    }

    /** A rank's environment as bin/hcclrun leaves it: the flags appended to JDK_JAVA_OPTIONS, and what was appended. */
    private Map<String, String> launchedRank(String usersOptions) throws IOException
    {
        String with = RankEnvironment.withJvmFlags(usersOptions);
        return Map.of("JAVA_HOME", fakeJdkShowingOptions().toString(), "JDK_JAVA_OPTIONS", with,
                RankEnvironment.ADDED_VARIABLE, RankEnvironment.appended(usersOptions, with));
    }

    @Test
    @Timeout(30)
    void underTheLauncherTheScriptsTakeOffWhatItAppendedSoTheJvmPrintsNoNote() throws Exception
    {
        createJar();
        String jar = root.resolve(JAR_REL).toString();
        String script = tmp.resolve("a/hccl-java").toString();

        Run alone = run(launchedRank(null), true, script, "Main");
        Run withUsers = run(launchedRank("-Xmx1g -ea"), true, script, "Main");

        assertEquals(0, alone.status(), alone.err());
        assertEquals(List.of("JDK_JAVA_OPTIONS=<unset>", "ADDED=<unset>", FLAG, VECTOR_MODULE,
                NATIVE_ACCESS, FOREIGN_MODULE, "-cp", jar, "Main"), alone.out());
        // The user's own options stay: the JVM notes those, as it would without the launcher.
        assertEquals(0, withUsers.status(), withUsers.err());
        assertEquals(List.of("JDK_JAVA_OPTIONS=-Xmx1g -ea", "ADDED=<unset>", FLAG, VECTOR_MODULE,
                NATIVE_ACCESS, FOREIGN_MODULE, "-cp", jar, "Main"), withUsers.out());
    }

    @Test
    @Timeout(30)
    void aValueChangedSinceTheLauncherOrNotTheLaunchersIsLeftAsItIs() throws Exception
    {
        createJar();
        String script = tmp.resolve("a/hccl-java").toString();
        String flags = RankEnvironment.withJvmFlags(null);

        Run changed = run(Map.of("JAVA_HOME", fakeJdkShowingOptions().toString(), "JDK_JAVA_OPTIONS", flags + " -ea",
                RankEnvironment.ADDED_VARIABLE, flags), true, script, "Main");
        Run users = run(Map.of("JAVA_HOME", fakeJdkShowingOptions().toString(), "JDK_JAVA_OPTIONS", flags), true,
                script, "Main");

        assertEquals(0, changed.status(), changed.err());
        assertEquals("JDK_JAVA_OPTIONS=" + flags + " -ea", changed.out().get(0));
        assertEquals(0, users.status(), users.err());
        assertEquals("JDK_JAVA_OPTIONS=" + flags, users.out().get(0));
    }

    @Test
    @Timeout(30)
    void toolsThatReduceNothingRunWithoutTheVectorModuleEvenUnderTheLauncher() throws Exception
    {
        createJar();
        String jar = root.resolve(JAR_REL).toString();

        Run trace = run(launchedRank(null), true, tmp.resolve("a/hccl-trace").toString(), "/dumps");
        Run topo = run(launchedRank(null), true, tmp.resolve("a/hccl-topo").toString(), "--probe");

        assertEquals(0, trace.status(), trace.err());
        assertEquals(List.of("JDK_JAVA_OPTIONS=<unset>", "ADDED=<unset>", FLAG, NATIVE_ACCESS, "-cp",
                jar, "dev.hccl.tools.trace.HcclTrace", "/dumps"), trace.out());
        assertEquals(0, topo.status(), topo.err());
        assertEquals(List.of("JDK_JAVA_OPTIONS=<unset>", "ADDED=<unset>", FLAG, NATIVE_ACCESS, "-cp",
                jar, "dev.hccl.tools.topo.HcclTopo", "--probe"), topo.out());
    }

    @Test
    @Timeout(30)
    void hcclrunRunsTheLauncherOnJavaHomesJava() throws Exception
    {
        createJar();

        Run r = run(Map.of("JAVA_HOME", fakeJdk("25.0.1").toString()), true,
                tmp.resolve("a/hcclrun").toString(), "--version");

        assertEquals(0, r.status(), r.err());
        assertEquals(List.of("JAVA_HOME-java", "-cp", root.resolve(JAR_REL).toString(),
                "dev.hccl.tools.launch.HcclRun", "--version"), r.out());
    }
}
