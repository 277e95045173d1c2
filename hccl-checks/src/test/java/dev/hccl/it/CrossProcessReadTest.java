package dev.hccl.it;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Ranks of one node, separate JVMs on a JDK of 22 or later, read each other's ordinary direct buffers across
 * processes ({@code process_vm_readv} through the foreign function API, {@code HCCL_CMA=1}) in the node arena's
 * collectives, and get the reference's results ({@link OrdinaryBuffersWorker}); where the kernel will not let them (a
 * rank in a PID namespace of its own, as in a container of its own) every rank falls back with one DEBUG line, and
 * the results are the same.
 * <p>
 * It needs a JDK of 22 or later besides the one Maven runs (found under {@code /usr/lib/jvm}, or named by
 * {@code HCCL_TEST_JAVA22}) and root for {@code unshare}; without them it is skipped, unless {@code HCCL_TEST_CMA=
 * required} (set by .ci/run), which makes their absence a failure.
 */
@Timeout(300)
class CrossProcessReadTest
{
    private static final String REQUIRED_ENV = "HCCL_TEST_CMA";
    private static final int RANKS = 3;
    private static final String SHM_DEBUG = "-Dorg.slf4j.simpleLogger.log.dev.hccl.transport.shm=debug";
    private static final Pattern BYTES_READ =
        Pattern.compile("read (\\d+) bytes of peers' ordinary buffers in (\\d+) reads with process_vm_readv");

    /** A job token, as hcclrun sets one (without it rank 0 warns), and the reads turned on. */
    private static final Map<String, String> TOKEN = Map.of("HCCL_JOB_TOKEN", "cross-process-read-test-token",
        "HCCL_CMA", "1");

    private static Path java22;
    private static int java22Feature;

    @BeforeAll
    static void findTheJdk() throws IOException
    {
        java22 = findJava22();
        final String missing = null == java22 ? "no JDK of 22 or later under /usr/lib/jvm, nor HCCL_TEST_JAVA22" :
            !"root".equals(System.getProperty("user.name")) ? "not root, which unshare --pid needs" : null;
        if (null != missing && !"required".equals(System.getenv(REQUIRED_ENV)))
        {
            Assumptions.abort("CrossProcessReadTest skipped: " + missing + "; set " + REQUIRED_ENV + "=required to " +
                "make that a failure, as .ci/run does");
        }
        if (null != missing)
        {
            fail("CrossProcessReadTest needs a JDK of 22 or later (HCCL_TEST_JAVA22=<its bin/java>, or one under " +
                "/usr/lib/jvm) and root: " + missing);
        }
    }

    @Test
    void ranksReadEachOthersOrdinaryBuffersAcrossProcessesAndTheResultsAreRight() throws Exception
    {
        try (ProcessJob job = ProcessJob.onPort(TcpConformanceTest.freePort()))
        {
            for (int r = 0; r < RANKS; r++)
            {
                job.startRank(r, RANKS, java22(), OrdinaryBuffersWorker.class, "256m", TOKEN);
            }
            final List<String> outputs = checkedOutputs(job, RANKS);
            for (int r = 0; r < RANKS; r++)
            {
                final String out = outputs.get(r);
                assertTrue(out.contains("ordinary buffers read with process_vm_readv"), out);
                // Each of the 3 rounds reads at least the others' shares of its large all-reduce across processes.
                final Matcher read = BYTES_READ.matcher(out);
                assertTrue(read.find(), "no count of what was read at close:\n" + out);
                final long least = 3L * 300_000 * Float.BYTES * (RANKS - 1) / RANKS;
                assertTrue(Long.parseLong(read.group(1)) >= least, "read " + read.group(1) + " bytes, expected at " +
                    "least " + least + ":\n" + out);
                assertFalse(out.contains("WARN"), out);
            }
        }
    }

    @Test
    void whereTheKernelWillNotLetARankReadTheOthersEveryRankCopiesAndTheResultsAreRight() throws Exception
    {
        try (ProcessJob job = ProcessJob.onPort(TcpConformanceTest.freePort()))
        {
            for (int r = 0; r < RANKS; r++)
            {
                final List<String> command = new ArrayList<>();
                if (r == 1)
                {
                    // Its own PID namespace: the process id it publishes means another process to the others.
                    command.addAll(List.of("unshare", "--pid", "--fork", "--kill-child"));
                }
                command.addAll(java22());
                job.startRank(r, RANKS, command, OrdinaryBuffersWorker.class, "256m", TOKEN);
            }
            final List<String> outputs = checkedOutputs(job, RANKS);
            for (int r = 0; r < RANKS; r++)
            {
                final String out = outputs.get(r);
                // One DEBUG line says why, naming what failed; nothing at WARN.
                assertCopiedSayingWhyOnce(out);
                assertTrue(out.contains("rank 1") || r == 1, out);
                assertFalse(out.contains("WARN"), out);
            }
        }
    }

    @Test
    void aRankWhoseSettingIsOffMakesEveryRankCopyAndSayWhichRank() throws Exception
    {
        try (ProcessJob job = ProcessJob.onPort(TcpConformanceTest.freePort()))
        {
            for (int r = 0; r < RANKS; r++)
            {
                final Map<String, String> env = new java.util.HashMap<>(TOKEN);
                if (r == 2)
                {
                    env.put("HCCL_CMA", "0");
                }
                job.startRank(r, RANKS, java22(), OrdinaryBuffersWorker.class, "256m", env);
            }
            final List<String> outputs = checkedOutputs(job, RANKS);
            for (int r = 0; r < RANKS; r++)
            {
                final String out = outputs.get(r);
                assertCopiedSayingWhyOnce(out);
                assertTrue(out.contains(r == 2 ? "HCCL_CMA=0" : "rank 2 cannot: HCCL_CMA=0"), out);
            }
        }
    }

    @Test
    void aRankThatDiesWhileTheOthersReadItsMemoryFailsTheirOperationNamingIt() throws Exception
    {
        try (ProcessJob job = ProcessJob.onPort(TcpConformanceTest.freePort()))
        {
            for (int r = 0; r < RANKS; r++)
            {
                job.startRank(r, RANKS, java22(), AllReduceLoopWorker.class, "256m", TOKEN);
            }
            for (int r = 0; r < RANKS; r++)
            {
                assertTrue(job.awaitLine(r, "READY", 120), job.outputs());
                assertTrue(job.output(r).contains("ordinary buffers read with process_vm_readv"), job.outputs());
            }
            job.process(2).destroyForcibly();
            for (int r = 0; r < 2; r++)
            {
                // The worker's own exit for a failed operation: not a hang, not a crash of the JVM.
                assertEquals(3, job.awaitExit(r, 90), job.outputs());
                final String out = job.output(r);
                assertTrue(out.contains("FAILED") && out.contains("rank 2"), out);
                assertFalse(out.contains("hs_err"), out);
            }
        }
    }

    @Test
    void aRankStoppedWhileTheOthersReadItsMemoryIsNamedByThemWithinTheHeartbeatTimeout() throws Exception
    {
        final Map<String, String> env = new java.util.HashMap<>(TOKEN);
        env.put("HCCL_HEARTBEAT_TIMEOUT", "3");
        try (ProcessJob job = ProcessJob.onPort(TcpConformanceTest.freePort()))
        {
            for (int r = 0; r < RANKS; r++)
            {
                job.startRank(r, RANKS, java22(), AllReduceLoopWorker.class, "256m", env);
            }
            for (int r = 0; r < RANKS; r++)
            {
                assertTrue(job.awaitLine(r, "READY", 120), job.outputs());
            }
            assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(job.process(1).pid())).start()
                .waitFor(), "kill -STOP");
            for (final int r : new int[] {0, 2})
            {
                // The heartbeat's failure, well before the 30-minute operation timeout: not a silent hang.
                assertEquals(3, job.awaitExit(r, 90), job.outputs());
                final String out = job.output(r);
                assertTrue(out.contains("FAILED") && out.contains("rank 1"), out);
            }
            new ProcessBuilder("kill", "-CONT", Long.toString(job.process(1).pid())).start().waitFor();
        }
    }

    @Test
    void onTheJdkMavenRunsBeforeJdk22TheRanksCopyAndSayWhyAtDebug() throws Exception
    {
        Assumptions.assumeTrue(Runtime.version().feature() < 22, "Maven runs on JDK 22 or later: covered above");
        try (ProcessJob job = ProcessJob.onPort(TcpConformanceTest.freePort()))
        {
            for (int r = 0; r < 2; r++)
            {
                job.startRank(r, 2, List.of(ProcessJob.JAVA, ProcessJob.QUICK_JIT, SHM_DEBUG),
                    OrdinaryBuffersWorker.class, "256m", TOKEN);
            }
            for (final String out : checkedOutputs(job, 2))
            {
                assertTrue(out.contains("the JDK's foreign function API is final from JDK 22"), out);
            }
        }
    }

    /** Every rank of the job exits 0, having checked its results against the reference: their outputs. */
    private static List<String> checkedOutputs(final ProcessJob job, final int ranks) throws Exception
    {
        final List<String> outputs = new ArrayList<>();
        for (int r = 0; r < ranks; r++)
        {
            assertEquals(0, job.awaitExit(r, 240), job.outputs());
        }
        for (int r = 0; r < ranks; r++)
        {
            final String out = job.output(r);
            assertTrue(out.contains("CHECKED "), out);
            outputs.add(out);
        }
        return outputs;
    }

    /** A rank that copied its ordinary buffers into the arena, read none across processes, and said why once. */
    private static void assertCopiedSayingWhyOnce(final String out)
    {
        assertFalse(out.contains("ordinary buffers read with process_vm_readv"), out);
        assertEquals(1, count(out, "ordinary buffers are copied into the node arena, not read across processes"),
            out);
    }

    private static int count(final String text, final String part)
    {
        int n = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1))
        {
            n++;
        }
        return n;
    }

    /** The JDK 22+ java with the flags bin/hccl-java gives it, and the arena's DEBUG lines on. */
    private static List<String> java22()
    {
        final List<String> command = new ArrayList<>(List.of(java22.toString(), ProcessJob.QUICK_JIT,
            "--enable-native-access=ALL-UNNAMED", SHM_DEBUG));
        if (java22Feature >= 23)
        {
            // Quiet about Agrona's and Netty's sun.misc.Unsafe, as bin/hccl-java keeps it.
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        return command;
    }

    private static Path findJava22() throws IOException
    {
        final String named = System.getenv("HCCL_TEST_JAVA22");
        if (null != named && !named.isEmpty())
        {
            final Path java = Path.of(named);
            java22Feature = feature(java.toAbsolutePath().getParent().getParent().resolve("release"));
            return java;
        }
        final Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms))
        {
            return null;
        }
        try (DirectoryStream<Path> homes = Files.newDirectoryStream(jvms))
        {
            for (final Path home : homes)
            {
                final Path release = home.resolve("release");
                final Path java = home.resolve("bin/java");
                if (Files.isRegularFile(release) && Files.isExecutable(java) && feature(release) >= 22)
                {
                    java22Feature = feature(release);
                    return java;
                }
            }
        }
        return null;
    }

    private static int feature(final Path release) throws IOException
    {
        if (!Files.isRegularFile(release))
        {
            return 22;
        }
        final Matcher m = Pattern.compile("JAVA_VERSION=\"(\\d+)").matcher(Files.readString(release));
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }
}
