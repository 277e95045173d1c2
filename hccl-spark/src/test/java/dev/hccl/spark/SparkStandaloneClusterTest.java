package dev.hccl.spark;

import dev.hccl.spark.examples.SparkDjlTraining;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A real Spark standalone cluster over two simulated nodes ({@code tools/netns-cluster.sh}): a master and one worker
 * per node, Spark's jars from Maven as {@code SPARK_HOME/jars} (no distribution), started with {@code java} as
 * {@code start-master.sh} and {@code start-worker.sh} would; the driver ({@link StandaloneDriver}) in node 0, its
 * executors of one core each, so that a barrier stage's ranks are four executor JVMs on two nodes, shared memory
 * within a node and TCP across. The driver runs once; each test checks one of its stages: every collective; a task
 * that throws once; an executor killed (SIGKILL) inside a collective, after which the stage is retried and computes
 * right, no rank waiting out a timeout; DJL training over a DataFrame ({@link DjlTrainingStage}), an executor killed
 * mid-training and the retried stage resuming from rank 0's checkpoint. Once the application ends, nothing of it is
 * left in {@code /dev/shm} or on a port. Needs root and iproute2, as {@code SimulatedClusterTest};
 * {@code HCCL_TEST_NETNS=required} (.ci/run) turns their absence into a failure.
 */
@Timeout(value = 12, unit = TimeUnit.MINUTES)
class SparkStandaloneClusterTest
{
    private static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    /**
     * The master's, workers', driver's and executors' JIT: C1 only. The cluster's JVMs share CI's two cores for a
     * minute, and C2's compilations took the cores they needed; what the tests check does not depend on the tier.
     */
    private static final String QUICK_JIT = "-XX:TieredStopAtLevel=1";
    private static final String MASTER = "spark://10.77.0.1:7077";
    private static final int NODES = 2;
    /** How long after the kill the retried stage may take: far below the stage's 60 s connect and 600 s timeouts. */
    private static final double RETRY_SECONDS = 45;
    /**
     * The same for the DJL stage, whose retry starts an executor and its PyTorch engine and trains two epochs: far
     * below the stage's 600 s timeout.
     */
    private static final double DJL_RETRY_SECONDS = 150;

    private static Path script;
    private static Path home;
    private static final List<Process> daemons = new ArrayList<>();
    private static String driverOutput;
    private static Set<String> leftInShm;
    private static List<String> leftOnPorts;

    @BeforeAll
    static void runTheDriverOnACluster() throws Exception
    {
        script = Paths.get("..", "tools", "netns-cluster.sh").toAbsolutePath().normalize();
        final String[] up = runScript("up", "--nodes", Integer.toString(NODES));
        if (!"0".equals(up[0]))
        {
            script = null;
            if (!"required".equals(System.getenv("HCCL_TEST_NETNS")))
            {
                Assumptions.abort("SparkStandaloneClusterTest needs simulated nodes, which need root and iproute2 (" +
                    up[1].strip() + "); set HCCL_TEST_NETNS=required to make this a failure, as .ci/run does");
            }
            fail("tools/netns-cluster.sh up failed (root and iproute2 are needed; .ci/run has both):\n" + up[1]);
        }
        home = Files.createTempDirectory("hccl-spark-home");
        Files.createDirectories(home.resolve("jars"));
        // SPARK_HOME/jars: Spark and what it depends on, as a distribution has them; the application's jar (hccl-spark's
        // classes and test classes), hccl-shaded and hccl-djl go with spark-submit, as a user's would: in one class
        // loader, as hccl-djl's classes use the library's.
        final List<Path> classes = new ArrayList<>();
        Path shaded = null;
        final List<String> shipped = new ArrayList<>();
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator))
        {
            final Path p = Paths.get(entry);
            if (Files.isDirectory(p))
            {
                classes.add(p);
            }
            else if (p.getFileName().toString().startsWith("hccl-"))
            {
                shipped.add(p.toString());
                shaded = p.getFileName().toString().startsWith("hccl-shaded") ? p : shaded;
            }
            else if (entry.endsWith(".jar") && !Files.exists(home.resolve("jars").resolve(p.getFileName())))
            {
                Files.createSymbolicLink(home.resolve("jars").resolve(p.getFileName()), p);
            }
        }
        assertTrue(shaded != null, "hccl-shaded is not on the test class path");
        final Path app = jar(classes, home.resolve("app.jar"));
        final Set<String> shmBefore = shm();
        secrets();
        daemons.add(daemon(0, "master", "org.apache.spark.deploy.master.Master", "--host", "10.77.0.1", "--port",
            "7077", "--webui-port", "8080"));
        awaitLine("master", "I have been elected leader");
        for (int node = 0; node < NODES; node++)
        {
            daemons.add(daemon(node, "worker" + node, "org.apache.spark.deploy.worker.Worker", "--host",
                "10.77.0." + (node + 1), "--cores", "2", "--memory", "2g", "--work-dir",
                home.resolve("work" + node).toString(), MASTER));
        }
        awaitLine("master", "Registering worker 10.77.0.2");
        awaitLine("master", "Registering worker 10.77.0.1");

        // spark-submit in client mode, as docs/DEPLOY.md gives it: Spark's SparkSubmit in a JVM with the driver's flags
        // (those bin/spark-submit adds on JDK 17, and hccl-java's), on SPARK_HOME/jars.
        final String flags = jvmFlags();
        final List<String> driver = new ArrayList<>(List.of("ip", "netns", "exec", "hccl-node0", JAVA, QUICK_JIT));
        driver.addAll(List.of(flags.split(" ")));
        driver.addAll(List.of("-Xmx512m", "-cp", home.resolve("jars") + File.separator + "*",
            "org.apache.spark.deploy.SparkSubmit", "--master", MASTER, "--deploy-mode", "client",
            "--total-executor-cores", Integer.toString(StandaloneDriver.RANKS), "--executor-cores", "1",
            "--executor-memory", "512m", "--conf", "spark.driver.host=10.77.0.1", "--conf", "spark.ui.enabled=false",
            "--properties-file", secrets().toString(),
            // DJL's engine offline, from the jars, unpacked once into the build's directory for every executor.
            "--conf", "spark.executor.extraJavaOptions=" + flags + " " + QUICK_JIT + " -Dai.djl.offline=true",
            "--conf", "spark.executorEnv.DJL_CACHE_DIR=" + Paths.get("target", "djl-cache").toAbsolutePath(),
            "--jars", String.join(",", shipped), "--class", StandaloneDriver.class.getName(), app.toString(),
            home.toString()));
        final Process p = new ProcessBuilder(driver).redirectErrorStream(true)
            .redirectOutput(home.resolve("driver.out").toFile()).start();
        final boolean ended = p.waitFor(8, TimeUnit.MINUTES);
        if (!ended)
        {
            p.destroyForcibly().waitFor();
        }
        driverOutput = Files.readString(home.resolve("driver.out"));
        assertTrue(ended && p.exitValue() == 0, (ended ? "the driver failed" : "the driver hung (killed after 8 "
            + "minutes)") + ":\n" + driverOutput + executorLogs());
        leftInShm = awaitExecutorsGone(shmBefore);
        leftOnPorts = listeningBesides(daemons);
    }

    @AfterAll
    static void stopTheCluster() throws Exception
    {
        for (final Process d : daemons)
        {
            d.destroy();
        }
        for (final Process d : daemons)
        {
            if (!d.waitFor(20, TimeUnit.SECONDS))
            {
                d.destroyForcibly();
            }
        }
        if (script != null)
        {
            runScript("down");
        }
        if (home != null)
        {
            try (Stream<Path> all = Files.walk(home))
            {
                all.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    @Test
    void everyCollectiveIsRightWithTheRanksInExecutorsOnTwoNodes()
    {
        final String line = result("collectives");
        final Matcher m = Pattern.compile("rank (\\d) pid (\\d+) host (10\\.77\\.0\\.\\d) transports (\\S+) (.*?)" +
            "(?=, rank \\d pid|]$)").matcher(line);
        final List<String> pids = new ArrayList<>();
        final String[] hosts = new String[StandaloneDriver.RANKS];
        final String[] transports = new String[StandaloneDriver.RANKS];
        while (m.find())
        {
            final int r = Integer.parseInt(m.group(1));
            pids.add(m.group(2));
            hosts[r] = m.group(3);
            transports[r] = m.group(4);
            assertEquals("allReduce right allGather 0,10,20,30 broadcast 42 reduceScatter " + (4 * r + 6) +
                " reduce " + (r == 0 ? 9 : -1) + " allToAll " + r + "," + (100 + r) + "," + (200 + r) + "," +
                (300 + r), m.group(5), line);
        }
        assertEquals(StandaloneDriver.RANKS, pids.size(), line);
        assertEquals(StandaloneDriver.RANKS, pids.stream().distinct().count(), "four executor JVMs: " + line);
        assertEquals(Set.of("10.77.0.1", "10.77.0.2"), Set.copyOf(List.of(hosts)), "executors on both nodes: " + line);
        for (int r = 0; r < StandaloneDriver.RANKS; r++)
        {
            final List<String> expected = new ArrayList<>();
            for (int p = 0; p < StandaloneDriver.RANKS; p++)
            {
                expected.add(p == r ? "self" : hosts[p].equals(hosts[r]) ? "shm" : "tcp");
            }
            assertEquals(String.join(",", expected), transports[r], "rank " + r + ": " + line);
        }
    }

    @Test
    void sparkRpcIsAuthenticated()
    {
        // SparkHccl hands the job token over Spark's RPC, which spark.authenticate closes to whoever lacks the secret.
        assertTrue(driverOutput.contains("SecurityManager: authentication enabled"), driverOutput);
    }

    @Test
    void aTaskThatThrowsIsRetriedAndComputesRight()
    {
        final String line = result("throws");
        assertTrue(line.startsWith("[1:40.0, 1:40.0, 1:40.0, 1:40.0] in "), line);
    }

    @Test
    void anExecutorKilledInsideACollectiveIsRetriedWithoutWaitingOutATimeout()
    {
        final String line = result("killed");
        assertTrue(line.startsWith("[1:10.0, 1:10.0, 1:10.0, 1:10.0] in "), line);
        final double seconds = Double.parseDouble(line.replaceAll(".* in ([\\d.]+) s after the kill", "$1"));
        assertTrue(seconds < RETRY_SECONDS, "the retry ended " + seconds + " s after the kill: " + line);
        assertTrue(driverOutput.contains("killing executor "), driverOutput);
    }

    @Test
    void djlTrainsOnTheDataFramesPartitionsAndResumesAfterAnExecutorIsKilled()
    {
        final String line = result("djl");
        final Matcher m = Pattern.compile("attempt (\\d+) resumed (\\d+) accuracy ([\\d.]+) ranks (.*) in ([\\d.]+) s " +
            "after the kill").matcher(line);
        assertTrue(m.matches(), line);
        assertEquals("1", m.group(1), "the stage was retried once: " + line);
        assertEquals(Integer.toString(DjlTrainingStage.KILLED_AFTER), m.group(2),
            "rank 0 resumed from the checkpoint written before the kill: " + line);
        assertTrue(Double.parseDouble(m.group(3)) >= SparkDjlTraining.TARGET_ACCURACY, "the blobs are learnt: " + line);
        assertTrue(Double.parseDouble(m.group(5)) < DJL_RETRY_SECONDS, "the retry took too long: " + line);
        final Matcher rank = Pattern.compile("(\\d+)/(\\d+) threads (\\S+) crc (\\p{XDigit}+)").matcher(m.group(4));
        int rows = 0;
        int largest = 0;
        final Set<String> shards = new TreeSet<>();
        final Set<String> checksums = new TreeSet<>();
        int ranks = 0;
        while (rank.find())
        {
            ranks++;
            rows += Integer.parseInt(rank.group(1));
            largest = Math.max(largest, Integer.parseInt(rank.group(1)));
            shards.add(rank.group(2));
            assertEquals("1", rank.group(3), "the engine's threads, one a task slot: " + line);
            checksums.add(rank.group(4));
        }
        assertEquals(StandaloneDriver.RANKS, ranks, line);
        assertEquals(SparkDjlTraining.ROWS, rows, "every row in one partition: " + line);
        assertEquals(Set.of(Integer.toString(largest)), shards, "shards padded to the largest partition: " + line);
        assertEquals(1, checksums.size(), "every rank ends with the same parameters: " + line);
    }

    @Test
    void theApplicationLeavesNothingInSharedMemoryOrOnAPort()
    {
        assertEquals(Set.of(), leftInShm, "left in /dev/shm by the executors");
        assertEquals(List.of(), leftOnPorts, "listening after the application ended, besides the master and workers");
    }

    private static String result(final String name)
    {
        final String prefix = "RESULT " + name + ": ";
        return driverOutput.lines().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length()))
            .findFirst().orElseThrow(() -> new AssertionError("no " + prefix + "line in:\n" + driverOutput));
    }

    /** The flags this JVM runs with (surefire's argLine): what hccl-java and Spark need on JDK 17 and later. */
    private static String jvmFlags()
    {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(a -> a.startsWith("--add-") || a.startsWith("--enable-native-access") ||
                a.startsWith("--sun-misc") || a.startsWith("-Djdk.reflect") || a.startsWith("-Dio.netty"))
            .collect(Collectors.joining(" "));
    }

    /** Starts a Spark daemon in a node's namespace, as Spark's sbin scripts would, its output in {@code name.out}. */
    private static Process daemon(final int node, final String name, final String mainClass, final String... args)
        throws IOException
    {
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", "hccl-node" + node, JAVA,
            QUICK_JIT, "-Xmx256m", "-cp", home.resolve("jars") + File.separator + "*", mainClass));
        command.addAll(List.of(args));
        final ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(home.resolve(name + ".out").toFile());
        pb.environment().put("SPARK_HOME", home.toString());
        pb.environment().put("SPARK_SCALA_VERSION", "2.13");
        // spark.authenticate's secret, from a file only this user reads, as the daemons' SPARK_*_OPTS would give it.
        pb.environment().put("SPARK_CONF_DIR", home.resolve("conf").toString());
        return pb.start();
    }

    /**
     * The cluster's shared secret ({@code spark.authenticate}) and encryption of Spark's RPC, in a properties file
     * only this user can read: SparkHccl hands the job token over that RPC.
     */
    private static Path secrets() throws IOException
    {
        final Path conf = home.resolve("conf");
        final Path file = conf.resolve("spark-defaults.conf");
        if (!Files.exists(file))
        {
            Files.createDirectories(conf);
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(file, "spark.authenticate true\nspark.authenticate.secret " + UUID.randomUUID() +
                "\nspark.network.crypto.enabled true\n");
        }
        return file;
    }

    /** A jar of the given class directories: the application spark-submit ships. */
    private static Path jar(final List<Path> dirs, final Path jar) throws IOException
    {
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar)))
        {
            final Set<String> written = new TreeSet<>();
            for (final Path dir : dirs)
            {
                try (Stream<Path> files = Files.walk(dir))
                {
                    for (final Path f : files.filter(Files::isRegularFile).toList())
                    {
                        final String name = dir.relativize(f).toString().replace(File.separatorChar, '/');
                        if (written.add(name))
                        {
                            out.putNextEntry(new JarEntry(name));
                            Files.copy(f, out);
                            out.closeEntry();
                        }
                    }
                }
            }
        }
        return jar;
    }

    private static void awaitLine(final String name, final String text) throws Exception
    {
        final Path out = home.resolve(name + ".out");
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!Files.exists(out) || !Files.readString(out).contains(text))
        {
            if (System.nanoTime() > deadline)
            {
                fail(name + " never said \"" + text + "\":\n" + Files.readString(out));
            }
            Thread.sleep(100);
        }
    }

    /** Waits until the workers' executors are gone; what they left in /dev/shm. */
    private static Set<String> awaitExecutorsGone(final Set<String> before) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (daemons.stream().anyMatch(d -> d.toHandle().descendants().findAny().isPresent()) &&
            System.nanoTime() < deadline)
        {
            Thread.sleep(100);
        }
        final Set<String> left = shm();
        left.removeAll(before);
        return left;
    }

    private static Set<String> shm() throws IOException
    {
        try (Stream<Path> files = Files.list(Paths.get("/dev/shm")))
        {
            return files.map(f -> f.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /** The TCP sockets listening in the nodes' namespaces that none of the daemons holds. */
    private static List<String> listeningBesides(final List<Process> owners) throws Exception
    {
        final Set<String> pids = owners.stream().map(p -> "pid=" + p.pid() + ",").collect(Collectors.toSet());
        final List<String> strangers = new ArrayList<>();
        for (int node = 0; node < NODES; node++)
        {
            final Process ss = new ProcessBuilder("ip", "netns", "exec", "hccl-node" + node, "ss", "-Htlnp")
                .redirectErrorStream(true).start();
            final String out = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            ss.waitFor();
            for (final String l : out.lines().toList())
            {
                if (pids.stream().noneMatch(l::contains))
                {
                    strangers.add("node " + node + ": " + l);
                }
            }
        }
        return strangers;
    }

    private static String executorLogs() throws IOException
    {
        final StringBuilder all = new StringBuilder();
        try (Stream<Path> files = Files.walk(home))
        {
            for (final Path f : files.filter(f -> f.getFileName().toString().equals("stderr")).toList())
            {
                final List<String> lines = Files.readAllLines(f);
                all.append("\n--- ").append(f).append(" (last lines):\n")
                    .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size())));
            }
        }
        return all.toString();
    }

    /** Runs tools/netns-cluster.sh: its exit status and output. */
    private static String[] runScript(final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("bash", script.toString()));
        command.addAll(List.of(args));
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS))
        {
            p.destroyForcibly();
            return new String[] {"timeout", out};
        }
        return new String[] {Integer.toString(p.exitValue()), out};
    }
}
