package dev.hccl.bench.step;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.tools.ScriptCheckout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code hccl-step-bench} end to end on the tiny model: ranks as threads of this JVM, and real processes started by
 * {@code bin/hcclrun} through {@code bin/hccl-step-bench}. Only the table's shape is checked, never a speed.
 */
@Timeout(120)
class GradientStepBenchTest
{
    private static final List<String> ROWS = List.of("per-tensor none", "per-tensor-async none", "buckets none",
        "overlap none", "overlap fp16", "overlap bf16", "overlap fp8e4m3", "overlap topK(0.01)",
        "overlap powerSGD(1)");

    @TempDir
    Path tmp;

    @Test
    void ranksAsThreadsPrintEveryModeWithPositiveTimesAndWriteTheJson() throws Exception
    {
        final int ranks = 2;
        final Path json = tmp.resolve("out/step.json");
        final List<Communicator> comms = Hccl.initAll(ranks);
        final List<ByteArrayOutputStream> outs = List.of(new ByteArrayOutputStream(), new ByteArrayOutputStream());
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final List<Integer> status = onEveryRank(ranks, rank -> GradientStepBench.run(new String[]{"--model", "tiny",
            "-w", "1", "-n", "2", "--backward-ms", "0,4", "--bucket-cap", "64K", "--first-bucket", "16K",
            "--json", json.toString()}, () -> comms.get(rank),
            new PrintStream(outs.get(rank), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8)));

        final String table = outs.get(0).toString(StandardCharsets.UTF_8);
        assertEquals(List.of(0, 0), status, () -> table + "\nstderr:\n" + err.toString(StandardCharsets.UTF_8));
        assertEquals("", outs.get(1).toString(StandardCharsets.UTF_8), "only rank 0 prints");
        assertTrue(table.startsWith("# hccl-step-bench: model tiny, 13 gradients, "), table);
        assertTrue(table.contains("\n# nRanks 2 transport inproc warmup iters: 1 iters: 2 compute: spin "), table);
        assertRows(table, "", 2);
        assertTrue(table.contains("\n#   one node, this VM's shared memory: per-tensor ") &&
            table.contains("\n#   2 nodes of one rank, 10 GbE: per-tensor "), "the cost model's lines:\n" + table);
        assertTrue(table.contains(", topK(0.01) ") && table.contains(", fp8e4m3 ") && table.contains(", powerSGD(1) "),
            "every compression priced:\n" + table);

        final JsonNode report = new ObjectMapper().readTree(json.toFile());
        assertEquals("tiny", report.get("model").asText());
        assertEquals(2, report.get("worldSize").asInt());
        assertEquals(2 * ROWS.size(), report.get("rows").size());
        final JsonNode overlap = report.get("rows").get(ROWS.size() + 3);
        assertEquals("overlap", overlap.get("mode").asText());
        assertEquals(4.0, overlap.get("backwardMs").asDouble());
        assertEquals(2, overlap.get("stepNanos").size());
        assertTrue(overlap.get("collectives").asInt() > 1, "the caps split the tiny model into buckets");
    }

    /**
     * A sweep of bucket caps makes a row each, and {@code --autotune} a last row whose sizes autotune found in steps
     * before the row's: the JSON says how many and what it chose, and the table shows the choice.
     */
    @Test
    void aSweepMakesARowEachCapAndAutotuneARowOfItsChoice() throws Exception
    {
        final int ranks = 2;
        final Path json = tmp.resolve("sweep.json");
        final List<Communicator> comms = Hccl.initAll(ranks);
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final List<Integer> status = onEveryRank(ranks, rank -> GradientStepBench.run(new String[]{"--model", "tiny",
            "-w", "0", "-n", "1", "--modes", "overlap", "--compression", "none", "--bucket-cap", "16K,64K",
            "--first-bucket", "16K", "--autotune", "--json", json.toString()}, () -> comms.get(rank),
            new PrintStream(rank == 0 ? out : OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8)));
        final String table = out.toString(StandardCharsets.UTF_8);
        assertEquals(List.of(0, 0), status, () -> table + "\nstderr:\n" + err.toString(StandardCharsets.UTF_8));
        final List<String[]> rows = table.lines().filter(l -> !l.startsWith("#") && !l.isBlank())
            .map(l -> l.trim().split(" +")).toList();
        assertEquals(List.of("0.016", "0.063"), List.of(rows.get(0)[3], rows.get(1)[3]), table);
        final JsonNode report = new ObjectMapper().readTree(json.toFile());
        final JsonNode tuned = report.get("rows").get(2);
        assertTrue(tuned.get("tuningSteps").asInt() >= 2 * 12, "at least two trials of 12 steps: " + tuned);
        assertEquals(-1, report.get("rows").get(0).get("tuningSteps").asInt());
        assertEquals(rows.get(2)[3], "auto:" + StepTable.mib(tuned.get("firstBucketBytes").asLong()) + "/" +
            StepTable.mib(tuned.get("bucketCapBytes").asLong()), table);
    }

    @Test
    void theScriptRunsInRealProcessesThroughTheLauncher() throws Exception
    {
        final ScriptCheckout.Run run = ScriptCheckout.hcclrun(tmp, "hccl-step-bench", "-np", "2", "hccl-step-bench",
            "--model", "tiny", "-w", "1", "-n", "2", "--backward-ms", "2", "--compute", "sleep");
        assertEquals(0, run.status(), () -> run.stdout() + "\nstderr:\n" + run.stderr());
        assertTrue(run.stdout().lines().allMatch(l -> l.startsWith("[0] ")), "only rank 0 prints:\n" + run.stdout());
        assertRows(run.stdout(), "[0] ", 1);
    }

    @Test
    void aWrongOptionIsAUsageErrorOnEveryRank() throws Exception
    {
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int status = GradientStepBench.run(new String[]{"--model", "tiny", "--compression", "zip"},
            () -> { throw new AssertionError("no communicator for a usage error"); },
            new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(GradientStepBench.USAGE, status);
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("hccl-step-bench: unknown compression 'zip'"),
            err.toString(StandardCharsets.UTF_8));
    }

    /** Every variant once per backward pass, in order, with positive step times and the speedup they give. */
    private static void assertRows(final String output, final String prefix, final int backwardPasses)
    {
        final List<String[]> rows = output.lines().map(l -> l.substring(prefix.length()))
            .filter(l -> !l.startsWith("#") && !l.isBlank()).map(l -> l.trim().split(" +")).toList();
        assertEquals(backwardPasses * ROWS.size(), rows.size(), output);
        for (int i = 0; i < rows.size(); i++)
        {
            final String[] row = rows.get(i);
            assertEquals(StepTable.COLUMNS.size(), row.length, output);
            assertEquals(ROWS.get(i % ROWS.size()), row[1] + " " + row[2], output);
            assertEquals(row[1].startsWith("per-tensor") ? "-" : row[3].equals("25") ? "25" : "0.063", row[3], output);
            for (int c = 6; c <= 8; c++)
            {
                assertTrue(Double.parseDouble(row[c]) > 0, "step time in row " + i + ":\n" + output);
            }
            // Per-tensor's median step over this row's, both as printed (two decimals): a slow row of a busy machine
            // prints a speedup of 0.00, which is the ratio rounded, not a missing one.
            final double perTensorStep = Double.parseDouble(rows.get(i - i % ROWS.size())[6]);
            final double expected = perTensorStep / Double.parseDouble(row[6]);
            assertEquals(expected, Double.parseDouble(row[12]), 0.006 + 0.15 * expected, "speedup in row " + i + ":\n" +
                output);
        }
    }

    private static List<Integer> onEveryRank(final int ranks, final IntFunction<Integer> body)
        throws Exception
    {
        final ExecutorService pool = Executors.newFixedThreadPool(ranks);
        try
        {
            final List<Future<Integer>> futures = new ArrayList<>();
            for (int r = 0; r < ranks; r++)
            {
                final int rank = r;
                futures.add(pool.submit(() -> body.apply(rank)));
            }
            final List<Integer> results = new ArrayList<>();
            for (final Future<Integer> f : futures)
            {
                results.add(f.get(100, TimeUnit.SECONDS));
            }
            return results;
        }
        finally
        {
            pool.shutdownNow();
        }
    }
}
