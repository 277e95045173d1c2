package dev.hccl.it;

import dev.hccl.tools.status.HcclStatus;
import org.json.JSONArray;
import org.json.JSONObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code hccl-status} against a real job of three processes, split by parity, in which rank 2 sleeps before the job's
 * second all-reduce, so that ranks 0 and 1 hang in it: asked with the job's token at the address rank 0's INFO line
 * gives, rank 0 answers where every rank is in the job's communicator and in the split one it is in, with the
 * collectives each issued and completed, its links to the others and the bytes on them, and names rank 2 as the one
 * behind; asked with another token, or none, it tells nothing; and the job, asked many times, still completes right
 * once rank 2 wakes; a frozen rank is named as not answering, silent on its link. Shared memory and TCP; and a job
 * over mutual TLS, whose status needs the certificates as well as the token.
 */
@Timeout(300)
class JobStatusTest
{
    private static final String TOKEN = "job-status-test-token-4f1c2a";
    private static final int LATE = 2;

    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"shm", "tcp"})
    void theStatusOfAHangingJobNamesTheRankBehindAndOnlyForTheToken(final String transport) throws Exception
    {
        final int n = 3;
        try (ProcessJob job = ProcessJob.start(n, SplitLateRankWorker.class, "256m",
            Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_JOB_TOKEN", TOKEN,
                // The line that gives the status' address is INFO; the job's processes log WARN and above.
                "JAVA_TOOL_OPTIONS", "-Dorg.slf4j.simpleLogger.log.dev.hccl.core.HcclProvider=info"),
            Integer.toString(LATE), "15000"))
        {
            final String store = address(job);
            JSONObject report = null;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline)
            {
                final String[] said = status(Map.of("HCCL_JOB_TOKEN", TOKEN), store, "--json");
                if ("0".equals(said[2]))
                {
                    report = new JSONObject(said[0]);
                    if (report.getJSONArray("communicators").getJSONObject(0).getInt("behind") == LATE)
                    {
                        break;
                    }
                }
                Thread.sleep(200);
            }
            final String all = report + "\n" + job.outputs();
            assertTrue(report != null && report.getJSONArray("communicators").getJSONObject(0).getInt("behind") == LATE,
                "no report named rank " + LATE + ": " + all);
            assertEquals(n, report.getInt("worldSize"));
            final JSONArray communicators = report.getJSONArray("communicators");
            assertEquals(2, communicators.length(), all);
            final JSONObject root = communicators.getJSONObject(0);
            final JSONArray ranks = root.getJSONArray("ranks");
            final JSONObject late = ranks.getJSONObject(LATE).getJSONObject("position");
            assertEquals("idle", late.getString("state"), all);
            assertEquals(late.getLong("seq"), late.getLong("completed"), all);
            assertEquals(late.getLong("seq"), late.getLong("issued"), all);
            for (int r = 0; r < n; r++)
            {
                assertTrue(ranks.getJSONObject(r).getBoolean("answered"), all);
                if (r != LATE)
                {
                    final JSONObject p = ranks.getJSONObject(r).getJSONObject("position");
                    assertEquals("waiting", p.getString("state"), all);
                    assertTrue(p.getString("operation").startsWith("allReduce"), all);
                    assertTrue(p.getLong("seq") > late.getLong("seq"), all);
                    assertEquals(p.getLong("seq"), p.getLong("issued"), all);
                    assertEquals(late.getLong("completed"), p.getLong("completed"), all);
                }
            }
            assertTrue(root.getString("finding").startsWith("rank " + LATE + " is behind"), all);
            // The split communicator of ranks 0 and 2: both idle after its one all-reduce, nobody behind.
            final JSONObject half = communicators.getJSONObject(1);
            assertEquals(2, half.getInt("size"), all);
            assertEquals(-1, half.getInt("behind"), all);
            for (int r = 0; r < 2; r++)
            {
                final JSONObject member = half.getJSONArray("ranks").getJSONObject(r);
                assertEquals(2 * r, member.getInt("jobRank"), all);
                assertEquals("idle", member.getJSONObject("position").getString("state"), all);
                assertEquals(0, member.getJSONObject("position").getLong("completed"), all);
            }
            // Rank 0's links: up, heard from lately, bytes both ways (the split's all-gather, the surveys).
            final JSONArray jobRanks = report.getJSONArray("ranks");
            assertFalse(jobRanks.getJSONObject(0).has("link"), all);
            for (int r = 1; r < n; r++)
            {
                final JSONObject link = jobRanks.getJSONObject(r).getJSONObject("link");
                assertEquals(transport, link.getString("transport"), all);
                assertFalse(link.getBoolean("lost"), all);
                assertTrue(link.getLong("silentMillis") >= 0 && link.getLong("silentMillis") < 30_000, all);
                assertTrue(link.getLong("bytesSent") > 0 && link.getLong("bytesReceived") > 0, all);
            }

            final String[] text = status(Map.of("HCCL_JOB_TOKEN", TOKEN), store);
            assertEquals("0", text[2], text[1]);
            assertTrue(text[0].contains("Rank " + LATE + " holds the others up") && text[0].contains("idle after") &&
                text[0].contains("(job ranks 0, 2)") && text[0].contains(transport + ", up"), text[0]);

            // Someone without the token learns nothing: not the ranks, not the communicator.
            final String[] outsider = status(Map.of("HCCL_JOB_TOKEN", "not-the-token"), store);
            assertEquals("1", outsider[2], outsider[0] + outsider[1]);
            assertEquals("", outsider[0]);
            assertFalse(outsider[1].contains(root.getString("communicator")) || outsider[1].contains("idle"),
                outsider[1]);
            final String[] noToken = status(Map.of(), store);
            assertEquals("2", noToken[2], noToken[1]);
            assertEquals("", noToken[0]);

            // Asked all along, the job still completes right once the late rank wakes.
            for (int r = 0; r < n; r++)
            {
                assertEquals(0, job.awaitExit(r, 120), job.outputs());
                assertTrue(job.output(r).contains("OK"), job.outputs());
            }
        }
    }

    /**
     * A rank frozen (SIGSTOP) while the others all-reduce: the status still answers within seconds, naming the rank
     * that does not answer as the one holding the others up; once the job is gone, it says it cannot reach it.
     */
    @ParameterizedTest(name = "over {0}")
    @ValueSource(strings = {"shm", "tcp"})
    void aFrozenRankIsNamedAsNotAnswering(final String transport) throws Exception
    {
        final int n = 3;
        final int frozen = 1;
        final String store;
        try (ProcessJob job = ProcessJob.start(n, AllReduceLoopWorker.class, "256m",
            Map.of("HCCL_SHM_DISABLE", "tcp".equals(transport) ? "1" : "0", "HCCL_JOB_TOKEN", TOKEN,
                "JAVA_TOOL_OPTIONS", "-Dorg.slf4j.simpleLogger.log.dev.hccl.core.HcclProvider=info")))
        {
            store = address(job);
            for (int r = 0; r < n; r++)
            {
                assertTrue(job.awaitLine(r, "READY", 120), job.outputs());
            }
            assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(job.process(frozen).pid())).start()
                .waitFor(), "kill -STOP");
            final long asked = System.nanoTime();
            final String[] said = status(Map.of("HCCL_JOB_TOKEN", TOKEN), store, "--json");
            final double seconds = (System.nanoTime() - asked) / 1e9;
            assertEquals("0", said[2], said[1] + "\n" + job.outputs());
            final JSONObject report = new JSONObject(said[0]);
            final JSONObject root = report.getJSONArray("communicators").getJSONObject(0);
            assertEquals(frozen, root.getInt("behind"), report.toString(2));
            assertFalse(root.getJSONArray("ranks").getJSONObject(frozen).getBoolean("answered"), report.toString(2));
            assertTrue(root.getJSONArray("ranks").getJSONObject(2).getBoolean("answered"), report.toString(2));
            assertTrue(root.getString("finding").contains("did not answer"), report.toString(2));
            // Read after the survey's two seconds: the frozen rank has said nothing on its link since it stopped.
            final long silent = report.getJSONArray("ranks").getJSONObject(frozen).getJSONObject("link")
                .getLong("silentMillis");
            assertTrue(silent >= 1_500, report.toString(2));
            assertTrue(seconds < 15, "the status took " + seconds + " s");
        }
        final String[] gone = status(Map.of("HCCL_JOB_TOKEN", TOKEN), store, "--timeout", "1");
        assertEquals("1", gone[2], gone[0] + gone[1]);
        assertEquals("", gone[0]);
    }

    /**
     * A job over mutual TLS: hccl-status with the job's certificates gets the report; without them, the token alone is
     * not enough (the store requires TLS), and it learns nothing.
     */
    @Test
    void theStatusOfAJobOverTlsNeedsTheCertificates(@TempDir final Path certs) throws Exception
    {
        final Process made = new ProcessBuilder("bash", Path.of("..", "tools", "tls-certs.sh").toString(),
            certs.toString()).redirectErrorStream(true).start();
        final String said = new String(made.getInputStream().readAllBytes());
        assertTrue(made.waitFor(60, TimeUnit.SECONDS) && made.exitValue() == 0, "tools/tls-certs.sh:\n" + said);
        final Map<String, String> tls = Map.of("HCCL_TLS_CERT", certs.resolve("rank.pem").toString(),
            "HCCL_TLS_KEY", certs.resolve("rank.key").toString(), "HCCL_TLS_CA", certs.resolve("ca.pem").toString());
        final Map<String, String> env = new HashMap<>(tls);
        env.putAll(Map.of("HCCL_SHM_DISABLE", "1", "HCCL_JOB_TOKEN", TOKEN,
            "JAVA_TOOL_OPTIONS", "-Dorg.slf4j.simpleLogger.log.dev.hccl.core.HcclProvider=info"));
        final int n = 2;
        try (ProcessJob job = ProcessJob.start(n, AllReduceLoopWorker.class, "256m", env))
        {
            final String store = address(job);
            for (int r = 0; r < n; r++)
            {
                assertTrue(job.awaitLine(r, "READY", 120), job.outputs());
            }
            final Map<String, String> caller = new HashMap<>(tls);
            caller.put("HCCL_JOB_TOKEN", TOKEN);
            final String[] answered = status(caller, store, "--json");
            assertEquals("0", answered[2], answered[1] + "\n" + job.outputs());
            final JSONObject report = new JSONObject(answered[0]);
            assertEquals(n, report.getJSONArray("communicators").getJSONObject(0).getJSONArray("ranks").length());
            assertEquals("tcp", report.getJSONArray("ranks").getJSONObject(1).getJSONObject("link")
                .getString("transport"), answered[0]);

            final String[] plain = status(Map.of("HCCL_JOB_TOKEN", TOKEN), store, "--timeout", "3");
            assertEquals("1", plain[2], plain[0] + plain[1]);
            assertEquals("", plain[0]);
            assertTrue(plain[1].contains("TLS"), plain[1]);
        }
    }

    /** Where rank 0 serves the status, from its INFO line at init. */
    private static String address(final ProcessJob job) throws InterruptedException
    {
        assertTrue(job.awaitLine(0, "hccl-status 127.0.0.1:", 120), job.outputs());
        final Matcher at = Pattern.compile("hccl-status (127\\.0\\.0\\.1:\\d+)").matcher(job.output(0));
        assertTrue(at.find(), job.output(0));
        return at.group(1);
    }

    /** Runs hccl-status in this JVM: its output, its errors and its exit status. */
    private static String[] status(final Map<String, String> env, final String... args)
    {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final int status = HcclStatus.run(new PrintWriter(out, true), new PrintWriter(err, true), env, args);
        return new String[] {out.toString().trim(), err.toString(), Integer.toString(status)};
    }
}
