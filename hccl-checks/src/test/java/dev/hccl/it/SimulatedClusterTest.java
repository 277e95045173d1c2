package dev.hccl.it;

import dev.hccl.bench.check.SelfCheck;
import dev.hccl.tools.launch.HcclRun;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Two simulated nodes of two and of four ranks each: network namespaces made by {@code tools/netns-cluster.sh}, joined by a
 * bridge over 1 Gbit/s links, the ranks started in them by {@code hcclrun --netns}. Needs root and iproute2; without
 * them it is skipped with a message saying how to run it, unless {@code HCCL_TEST_NETNS=required} (set by
 * {@code .ci/run}, which runs as root): then it fails, since a skipped proof proves nothing.
 */
@Timeout(900)
class SimulatedClusterTest
{
    private static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    private static final String CLASS_PATH = System.getProperty("java.class.path");
    private static final int NODES = 2;
    private static final String SCRIPT = "tools/netns-cluster.sh";
    /** Set to {@code required} (as .ci/run does) to fail rather than skip where root or iproute2 is missing. */
    static final String REQUIRED_ENV = "HCCL_TEST_NETNS";
    private static final long SCRIPT_TIMEOUT_SECONDS = 60;

    private static Path script;

    @BeforeAll
    static void bringTheClusterUp() throws Exception
    {
        final String missing = missingPrerequisite();
        if (missing != null && !"required".equals(System.getenv(REQUIRED_ENV)))
        {
            // A developer's machine without root: say how to run it. CI sets the variable, so there it fails.
            Assumptions.abort("SimulatedClusterTest needs root and iproute2 (" + missing + "); run it as root, " +
                "or set " + REQUIRED_ENV + "=required to make its absence a failure, as .ci/run does");
        }
        if (missing != null)
        {
            fail("SimulatedClusterTest builds network namespaces and needs root and iproute2's ip and tc on the PATH: " +
                missing + ". Run it as root (sudo -E mvn -pl hccl-checks -am test -Dtest=SimulatedClusterTest " +
                "-Dsurefire.failIfNoSpecifiedTests=false); CI's .ci/run installs iproute2 and runs as root.");
        }
        script = findScript();
        runScript("up", "--nodes", Integer.toString(NODES), "--rate", "1gbit");
    }

    @AfterAll
    static void bringTheClusterDown() throws Exception
    {
        // Also after a half-failed up: down removes whatever exists.
        if (script != null)
        {
            runScript("down");
        }
    }

    @ParameterizedTest(name = "2 nodes x {0}")
    @ValueSource(ints = {2, 4})
    void everyRankSeesTwoNodesAndItsLocalRank(final int perNode)
    {
        final int ranks = NODES * perNode;
        final String stdout = launch(perNode, List.of(), TopologyReport.class.getName());
        final Pattern line = Pattern.compile("\\[(\\d+)] TOPOLOGY rank (\\d+) of (\\d+): nodes (\\d+), node (\\d+), " +
            "topology local rank (\\d+), ranks on node \\[(.*)], communicator local rank (\\d+) of (\\d+), " +
            "transports \\[(.*)]");
        final Map<Integer, Matcher> byRank = new HashMap<>();
        for (final String l : stdout.lines().toList())
        {
            final Matcher m = line.matcher(l);
            if (m.matches())
            {
                assertEquals(m.group(1), m.group(2), l);
                byRank.put(Integer.parseInt(m.group(2)), m);
            }
        }
        assertEquals(ranks, byRank.size(), "one TOPOLOGY line per rank in:\n" + stdout);
        for (int r = 0; r < ranks; r++)
        {
            final Matcher m = byRank.get(r);
            final int node = r / perNode;
            final String seen = "rank " + r + " saw: " + m.group();
            assertEquals(Integer.toString(ranks), m.group(3), seen);
            assertEquals(Integer.toString(NODES), m.group(4), "node count, " + seen);
            assertEquals(Integer.toString(node), m.group(5), "node of the rank, " + seen);
            assertEquals(Integer.toString(r % perNode), m.group(6), "local rank from node identity, " + seen);
            final int first = node * perNode;
            assertEquals(IntStream.range(first, first + perNode).mapToObj(Integer::toString)
                .collect(Collectors.joining(", ")), m.group(7), "ranks on the node, " + seen);
            assertEquals(Integer.toString(r % perNode), m.group(8), "communicator local rank, " + seen);
            assertEquals(Integer.toString(perNode), m.group(9), "communicator local size, " + seen);
            final List<String> expected = new ArrayList<>();
            for (int peer = 0; peer < ranks; peer++)
            {
                expected.add(peer == r ? "self" : peer / perNode == node ? "shm" : "tcp");
            }
            assertEquals(String.join(", ", expected), m.group(10),
                "shared memory within a node and TCP across, without any setting; " + seen);
        }
    }

    /**
     * SelfCheck's every operation, type, reduction and count, with the cost model's choice on the links the probe
     * measures ({@code HCCL_TOPO_PROBE=auto}: the hierarchical algorithms across these nodes from a few hundred
     * bytes) and with the hierarchy forced at every size.
     */
    @ParameterizedTest(name = "2 nodes x {0}, HCCL_ALGO={1}")
    @CsvSource({"2, NA", "2, hierarchical", "4, NA", "4, hierarchical"})
    void everyCollectiveIsRightAcrossTheSimulatedNodes(final int perNode, final String algo)
    {
        final int ranks = NODES * perNode;
        final String stdout = launch(perNode, List.of("env", "HCCL_ALGO=" + algo, "HCCL_TOPO_PROBE=auto"),
            SelfCheck.class.getName(), "0", "1", "7", "1000", "65537");
        for (int r = 0; r < ranks; r++)
        {
            final String prefix = "[" + r + "] rank " + r + " of " + ranks + ": ";
            assertTrue(stdout.lines().anyMatch(l -> l.startsWith(prefix) && l.endsWith(" passed, 0 failed")),
                "no passing summary from rank " + r + " in:\n" + stdout);
        }
        assertFalse(stdout.contains("WRONG"), stdout);
    }

    /**
     * A job started as torchrun starts one, by one launcher per node ({@code hcclrun --nnodes 2 --node-rank K}, run
     * in node K's namespace), the rendezvous on node 0's address and torchrun's default port: node 0's launcher has
     * the token in HCCL_JOB_TOKEN, node 1's in a file only its user can read. Every collective is right.
     */
    @Test
    void aLauncherOnEachNodeRunsOneJob(@TempDir final Path dir) throws Exception
    {
        final List<Process> launchers = launchPerNode(dir, 0, SelfCheck.class.getName(), "0", "1", "7", "65537");
        for (int node = 0; node < NODES; node++)
        {
            assertTrue(launchers.get(node).waitFor(300, TimeUnit.SECONDS), "node " + node + "'s launcher hangs:\n"
                + outputs(dir));
            assertEquals(0, launchers.get(node).exitValue(), outputs(dir));
        }
        final String all = outputs(dir);
        for (int r = 0; r < NODES * 2; r++)
        {
            final String prefix = "[" + r + "] rank " + r + " of " + NODES * 2 + ": ";
            assertTrue(all.lines().anyMatch(l -> l.startsWith(prefix) && l.endsWith(" passed, 0 failed")),
                "no passing summary from rank " + r + " in:\n" + all);
        }
        assertFalse(all.contains("WRONG"), all);
    }

    /**
     * torchrun's {@code --max-restarts} across the nodes: a rank of node 1 is killed (SIGKILL) in the middle of
     * training; its launcher stops its other rank and starts both again, node 0's ranks fail with the job and their
     * launcher does the same, and the job resumes from rank 0's last checkpoint and ends with the weights of an
     * uninterrupted run.
     */
    @Test
    void aRankKilledMidTrainingRestartsTheJobFromItsCheckpoint(@TempDir final Path dir)
        throws Exception
    {
        final List<Process> launchers = launchPerNode(dir, 1, "dev.hccl.examples.ResumableTraining", "--checkpoint",
            dir.resolve("checkpoint").toString(), "--epochs", "12", "--epoch-millis", "400");
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!Files.readString(dir.resolve("node0.out")).contains("[0] epoch 3:"))
        {
            assertTrue(System.nanoTime() < deadline && launchers.get(0).isAlive(), "no third epoch:\n" + outputs(dir));
            Thread.sleep(50);
        }
        final ProcessHandle victim = launchers.get(1).toHandle().descendants()
            .filter(c -> commandLine(c).contains("dev.hccl.examples.ResumableTraining")).findFirst()
            .orElseThrow(() -> new AssertionError("no rank under node 1's launcher:\n" + outputs(dir)));
        assertTrue(victim.destroyForcibly(), "SIGKILL to " + victim.pid());
        for (int node = 0; node < NODES; node++)
        {
            assertTrue(launchers.get(node).waitFor(300, TimeUnit.SECONDS), "node " + node + "'s launcher hangs:\n"
                + outputs(dir));
            assertEquals(0, launchers.get(node).exitValue(), outputs(dir));
            assertTrue(Files.readString(dir.resolve("node" + node + ".out"))
                .contains("hcclrun: restarting the ranks of this node (1 of 1 restarts)"), outputs(dir));
        }
        final String rank0 = Files.readString(dir.resolve("node0.out"));
        assertTrue(rank0.contains("[0] resumed after epoch ") && rank0.contains("(start 1)"), rank0);
        assertTrue(rank0.contains("[0] OK: after 12 epochs the weights match the uninterrupted single-process run"),
            rank0);
    }

    /**
     * Starts {@code hcclrun --nnodes 2 --node-rank K --nproc-per-node 2} in each node's namespace, its output (both
     * streams) into {@code nodeK.out} in {@code dir}.
     */
    private static List<Process> launchPerNode(final Path dir, final int restarts, final String mainClass,
        final String... args) throws IOException
    {
        final String token = "simulated-cluster-token-" + System.nanoTime();
        final Path tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, token);
        Files.setPosixFilePermissions(tokenFile, PosixFilePermissions.fromString("rw-------"));
        final List<Process> launchers = new ArrayList<>();
        for (int node = 0; node < NODES; node++)
        {
            final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", "hccl-node" + node, JAVA,
                ProcessJob.QUICK_JIT, "-cp", CLASS_PATH, HcclRun.class.getName(), "--nnodes", Integer.toString(NODES),
                "--node-rank", Integer.toString(node), "--nproc-per-node", "2", "--master-addr", "10.77.0.1",
                "--max-restarts", Integer.toString(restarts)));
            if (node == 1)
            {
                command.addAll(List.of("--token-file", tokenFile.toString()));
            }
            command.addAll(List.of("--", JAVA, ProcessJob.QUICK_JIT, "-Xmx256m",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", CLASS_PATH, mainClass));
            command.addAll(List.of(args));
            final ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("node" + node + ".out").toFile());
            pb.environment().remove("HCCL_JOB_TOKEN");
            if (node == 0)
            {
                pb.environment().put("HCCL_JOB_TOKEN", token);
            }
            launchers.add(pb.start());
        }
        return launchers;
    }

    /** A process' command line, from /proc (ProcessHandle.Info leaves out what is too long). */
    private static String commandLine(final ProcessHandle process)
    {
        try
        {
            return Files.readString(Paths.get("/proc", Long.toString(process.pid()), "cmdline")).replace('\0', ' ');
        }
        catch (final IOException gone)
        {
            return "";
        }
    }

    /** What each node's launcher printed so far. */
    private static String outputs(final Path dir)
    {
        final StringBuilder all = new StringBuilder();
        for (int node = 0; node < NODES; node++)
        {
            try
            {
                all.append("--- node ").append(node).append(":\n")
                    .append(Files.readString(dir.resolve("node" + node + ".out")));
            }
            catch (final IOException e)
            {
                all.append("(unreadable: ").append(e).append(")\n");
            }
        }
        return all.toString();
    }

    /**
     * Runs a main class as 2 nodes x {@code perNode} ranks through the launcher, each rank's command after
     * {@code prefix} (an {@code env} setting, say), and returns what the ranks printed.
     */
    private static String launch(final int perNode, final List<String> prefix, final String mainClass,
        final String... args)
    {
        final List<String> command = new ArrayList<>(List.of("-np", Integer.toString(NODES * perNode),
            "--netns", "hccl-node%d:" + perNode, "--"));
        command.addAll(prefix);
        command.addAll(List.of(JAVA, ProcessJob.QUICK_JIT, "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp", CLASS_PATH, mainClass));
        command.addAll(List.of(args));
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int status = HcclRun.run(command.toArray(new String[0]),
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        final String stdout = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, () -> "stdout:\n" + stdout + "\nstderr:\n" + err.toString(StandardCharsets.UTF_8));
        return stdout;
    }

    /** What stops this test from running here, or {@code null} when nothing does. */
    private static String missingPrerequisite() throws IOException
    {
        final Path status = Paths.get("/proc/self/status");
        if (!Files.isReadable(status))
        {
            return "this is not Linux (no /proc/self/status)";
        }
        final String uid = Files.readAllLines(status).stream().filter(l -> l.startsWith("Uid:"))
            .map(l -> l.split("\\s+")[2]).findFirst().orElse("?");
        if (!uid.equals("0"))
        {
            return "the effective user id is " + uid + ", not 0";
        }
        for (final String tool : List.of("ip", "tc"))
        {
            if (!onPath(tool))
            {
                return "'" + tool + "' is not on the PATH (" + System.getenv("PATH") + "); apt-get install -y iproute2";
            }
        }
        return null;
    }

    private static boolean onPath(final String tool)
    {
        final String path = System.getenv("PATH");
        if (path != null)
        {
            for (final String dir : path.split(File.pathSeparator))
            {
                if (!dir.isEmpty() && Files.isExecutable(Paths.get(dir, tool)))
                {
                    return true;
                }
            }
        }
        return false;
    }

    /** The script, found from the module's directory (where Maven runs the tests) upwards. */
    private static Path findScript()
    {
        for (Path dir = Paths.get("").toAbsolutePath(); dir != null; dir = dir.getParent())
        {
            final Path candidate = dir.resolve(SCRIPT);
            if (Files.isRegularFile(candidate))
            {
                return candidate;
            }
        }
        throw new AssertionError(SCRIPT + " not found above " + Paths.get("").toAbsolutePath());
    }

    private static void runScript(final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("bash", script.toString()));
        command.addAll(List.of(args));
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(SCRIPT_TIMEOUT_SECONDS, TimeUnit.SECONDS))
        {
            p.destroyForcibly();
            fail(String.join(" ", command) + " did not finish within " + SCRIPT_TIMEOUT_SECONDS + " s:\n" + output);
        }
        assertEquals(0, p.exitValue(), () -> String.join(" ", command) + " failed:\n" + output);
    }
}
