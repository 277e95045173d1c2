package dev.hccl.it;

import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.Hccl;
import dev.hccl.core.HcclProvider;
import dev.hccl.transport.netty.NettyTransport;
import dev.hccl.transport.shm.ShmTransportProvider;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A modular application: compiled with a {@code module-info} that requires {@code dev.hccl.api}, run with {@code java
 * --module-path ... -m app/app.Main} on the packaged library jars (automatic modules) beside Netty's, Agrona's and
 * SLF4J's jars, it creates communicators over the in-JVM and the TCP transports and all-reduces. Without the module
 * path's flag it must fail with E_ENV naming that flag.
 * <p>
 * It needs the library modules as jars (a {@code target/classes} directory is no automatic module), which the test
 * class path holds when the reactor has packaged them: {@code mvn verify}, not {@code mvn test}.
 */
@Timeout(300)
class ModulePathTest
{
    private static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    /** The flag that works on the module path: Agrona's module is the one that reaches jdk.internal.misc. */
    private static final String MODULE_PATH_FLAG = "--add-opens java.base/jdk.internal.misc=org.agrona";
    private static final long WAIT_SECONDS = 120;

    /** Each library jar's module name, by a class it holds. */
    private static final Map<Class<?>, String> LIBRARY = Map.of(
        Hccl.class, "dev.hccl.api",
        Reducers.class, "dev.hccl.algorithms",
        NettyTransport.class, "dev.hccl.transport.netty",
        ShmTransportProvider.class, "dev.hccl.transport.shm",
        HcclProvider.class, "dev.hccl.core");

    /** A class of each dependency jar that hccl-core needs at run time. */
    private static final List<String> DEPENDENCIES = List.of(
        "org.agrona.UnsafeApi", "org.slf4j.LoggerFactory", "org.slf4j.simple.SimpleLogger",
        "io.netty.util.Version", "io.netty.buffer.ByteBuf", "io.netty.resolver.AddressResolver",
        "io.netty.channel.Channel", "io.netty.channel.unix.Socket", "io.netty.channel.epoll.Epoll",
        "io.netty.handler.ssl.SslContext", "io.netty.handler.codec.ByteToMessageDecoder", "org.json.JSONObject");

    /** The native epoll library's jar holds no class, only this. */
    private static final String EPOLL_NATIVE = "META-INF/native/libnetty_transport_native_epoll_x86_64.so";

    private static final String MODULE_INFO = """
        module app {
            requires dev.hccl.api;
        }
        """;

    private static final String MAIN = """
        package app;

        import dev.hccl.api.Communicator;
        import dev.hccl.api.Hccl;
        import dev.hccl.api.ReduceOp;

        import java.util.ArrayList;
        import java.util.List;
        import java.util.concurrent.CompletableFuture;
        import java.util.concurrent.ExecutorService;
        import java.util.concurrent.Executors;

        public final class Main {
            // A thread per rank: the ranks of a communicator block until all have joined.
            private static final ExecutorService RANKS = Executors.newFixedThreadPool(2);

            public static void main(String[] args) {
                try {
                    System.out.println("hccl-api is " + Hccl.class.getModule());
                    Module vector = ModuleLayer.boot().findModule("jdk.incubator.vector").orElseThrow();
                    System.out.println("dev.hccl.algorithms reads jdk.incubator.vector: " + ModuleLayer.boot()
                        .findModule("dev.hccl.algorithms").orElseThrow().canRead(vector));
                    check("in-JVM", Hccl.initAll(2));
                    String rootInfo = Hccl.getRootInfo();
                    List<CompletableFuture<Communicator>> joins = new ArrayList<>();
                    for (int r = 0; r < 2; r++) {
                        int rank = r;
                        joins.add(CompletableFuture.supplyAsync(() -> Hccl.initRootInfo(rootInfo, rank, 2), RANKS));
                    }
                    List<Communicator> processPair = new ArrayList<>();
                    for (CompletableFuture<Communicator> join : joins) {
                        processPair.add(join.join());
                    }
                    // Two ranks of one node: the shared-memory plug-in, when the module path brings it.
                    check(processPair.get(0).transports(), processPair);
                } catch (Throwable t) {
                    t.printStackTrace();
                    System.exit(1);
                }
                System.exit(0);
            }

            private static void check(String transport, List<Communicator> comms) {
                List<CompletableFuture<float[]>> runs = new ArrayList<>();
                for (Communicator comm : comms) {
                    runs.add(CompletableFuture.supplyAsync(() -> {
                        float[] data = new float[1000];
                        java.util.Arrays.fill(data, comm.rank() + 1);
                        comm.allReduce(data, ReduceOp.SUM);
                        comm.close();
                        return data;
                    }, RANKS));
                }
                for (CompletableFuture<float[]> run : runs) {
                    for (float x : run.join()) {
                        if (x != 3.0f) {
                            throw new AssertionError(transport + ": got " + x + ", expected 3.0");
                        }
                    }
                }
                System.out.println(transport + " allReduce: OK");
            }
        }
        """;

    @TempDir
    static Path tmp;
    private static String modulePath;
    /** Why the test cannot run here, or null. */
    private static String notPackaged;

    @BeforeAll
    static void compileTheApplication() throws Exception
    {
        final Set<Path> jars = new LinkedHashSet<>();
        for (final Map.Entry<Class<?>, String> library : LIBRARY.entrySet())
        {
            final Path jar = location(library.getKey());
            if (!Files.isRegularFile(jar))
            {
                notPackaged = "the library modules are not packaged (" + jar + " is a directory): this test runs " +
                    "under mvn verify, with the jars on the test class path";
                return;
            }
            final String name = ModuleFinder.of(jar).findAll().stream()
                .map(ModuleReference::descriptor).map(ModuleDescriptor::name).findFirst().orElseThrow();
            assertEquals(library.getValue(), name,
                () -> jar + "'s module name (an older jar from a local repository? build the reactor with -am)");
            jars.add(jar);
        }
        for (final String dependency : DEPENDENCIES)
        {
            jars.add(location(Class.forName(dependency)));
        }
        final URL epollNative = ModulePathTest.class.getClassLoader().getResource(EPOLL_NATIVE);
        if (epollNative != null)
        {
            jars.add(Paths.get(((JarURLConnection)epollNative.openConnection()).getJarFileURL().toURI()));
        }

        final Path src = Files.createDirectories(tmp.resolve("src/app"));
        Files.writeString(src.resolve("module-info.java"), MODULE_INFO);
        Files.writeString(Files.createDirectories(src.resolve("app")).resolve("Main.java"), MAIN);
        final Path classes = tmp.resolve("mods/app");
        final String libraries = jars.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator));
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the JVM running the tests has no compiler");
        final ByteArrayOutputStream errors = new ByteArrayOutputStream();
        final int status = javac.run(null, errors, errors, "--module-path", libraries, "-d", classes.toString(),
            src.resolve("module-info.java").toString(), src.resolve("app/Main.java").toString());
        assertEquals(0, status, () -> "javac:\n" + errors.toString(StandardCharsets.UTF_8));
        modulePath = libraries + File.pathSeparator + classes;
    }

    @BeforeEach
    void needsThePackagedJars()
    {
        assumeTrue(notPackaged == null, notPackaged);
    }

    @Test
    void aModularApplicationAllReducesWithTheModulePathFlag() throws Exception
    {
        final Result run = run(MODULE_PATH_FLAG);
        assertEquals(0, run.status, run::toString);
        assertTrue(run.output.contains("hccl-api is module dev.hccl.api"), run::toString);
        assertTrue(run.output.contains("dev.hccl.algorithms reads jdk.incubator.vector: true"), run::toString);
        assertTrue(run.output.contains("in-JVM allReduce: OK"), run::toString);
        assertTrue(run.output.contains("shm allReduce: OK"), run::toString);
        if (Epoll.isAvailable())
        {
            // Unless the native library's module is resolved, Netty falls back to NIO without a word of warning.
            assertTrue(run.output.contains("tcp transport uses epoll"), run::toString);
        }
    }

    /**
     * Without a flag, with the class path's flag, and with the flag naming hccl-java's own modules (which the check
     * wrongly asked for once), Agrona still cannot reach jdk.internal.misc: creation fails naming the flag that works.
     */
    @ParameterizedTest(name = "[{0}]")
    @ValueSource(strings = {"", "--add-opens java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens java.base/jdk.internal.misc=dev.hccl.core,dev.hccl.algorithms"})
    void withoutTheModulePathFlagCreationFailsNamingIt(final String flag) throws Exception
    {
        final Result run = run(flag);
        assertTrue(run.status != 0, run::toString);
        assertTrue(run.output.contains("E_ENV: hccl-java needs the JVM flag '" + MODULE_PATH_FLAG + "'"),
            run::toString);
        assertFalse(run.output.contains("allReduce: OK"), run::toString);
    }

    @Test
    void withoutResolvingTheModulePathCreationFailsNamingTheFlag() throws Exception
    {
        // Automatic modules declare no dependencies: resolving only the application leaves Netty and SLF4J out.
        final Result run = run(MODULE_PATH_FLAG, "jdk.incubator.vector");
        assertTrue(run.status != 0, run::toString);
        assertTrue(run.output.contains("E_ENV") && run.output.contains("--add-modules ALL-MODULE-PATH"),
            run::toString);
        assertFalse(run.output.contains("allReduce: OK"), run::toString);
    }

    /** A run: its exit status, what it printed, and the command (for failure messages). */
    private record Result(int status, String output, String command)
    {
        @Override
        public String toString()
        {
            return command + "\nexit status " + status + ":\n" + output;
        }
    }

    private static Result run(final String flag) throws Exception
    {
        return run(flag, "ALL-MODULE-PATH,jdk.incubator.vector");
    }

    private static Result run(final String flag, final String addModules) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(JAVA, "--module-path", modulePath,
            "--add-modules", addModules,
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
            // The transport says at DEBUG whether it uses epoll.
            "-Dorg.slf4j.simpleLogger.log.dev.hccl.transport.netty.NettyTransport=debug"));
        if (!flag.isEmpty())
        {
            command.addAll(List.of(flag.split(" ")));
        }
        command.addAll(List.of("-m", "app/app.Main"));
        final Path log = Files.createTempFile(tmp, "app", ".log");
        final ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("JDK_JAVA_OPTIONS");
        final Process p = pb.start();
        final boolean finished = p.waitFor(WAIT_SECONDS, TimeUnit.SECONDS);
        if (!finished)
        {
            p.destroyForcibly().waitFor();
        }
        final Result run = new Result(finished ? p.exitValue() : -1, Files.readString(log), String.join(" ", command));
        assertTrue(finished, () -> "did not finish in " + WAIT_SECONDS + " s: " + run);
        return run;
    }

    private static Path location(final Class<?> type) throws URISyntaxException
    {
        return Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
