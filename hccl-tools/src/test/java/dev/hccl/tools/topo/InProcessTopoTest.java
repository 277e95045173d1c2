package dev.hccl.tools.topo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tool with ranks as threads of this JVM ({@link Hccl#initAll}): one node, so {@code LOC} everywhere off the
 * diagonal; the probe on small sizes; the JSON file; the exit statuses.
 */
@Timeout(120)
class InProcessTopoTest
{
    private static final PrintStream NOWHERE = new PrintStream(OutputStream.nullOutputStream());

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 3, 4})
    void oneNodeIsLocEverywhereOffTheDiagonal(final int ranks) throws Exception
    {
        final Run run = runOnEveryRank(ranks);

        assertEquals(List.of(0), run.statuses.stream().distinct().collect(Collectors.toList()), run.err);
        final List<String> lines = run.out.lines().collect(Collectors.toList());
        assertEquals("hccl-topo: " + ranks + " rank" + (ranks == 1 ? "" : "s") + " on 1 node", lines.get(0));
        assertMatrix(lines, ranks, (from, to) -> from.equals(to) ? "X" : "LOC");
        // One header line per rank, in rank order, with its local rank (one node: the rank itself).
        final int header = lines.indexOf(lines.stream().filter(l -> l.startsWith("Rank ")).findFirst().orElseThrow());
        for (int r = 0; r < ranks; r++)
        {
            final String[] cells = lines.get(header + 1 + r).trim().split(" +");
            assertEquals(List.of(Integer.toString(r), "0", Integer.toString(r)),
                List.of(cells[0], cells[2], cells[3]), lines.get(header + 1 + r));
        }
        assertTrue(lines.contains("  LOC  = " + LinkClass.LOC.meaning()), run.out);
        assertTrue(lines.stream().noneMatch(l -> l.startsWith("Latency")), "no probe without --probe:\n" + run.out);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 3, 4})
    void probeOnSmallSizesFillsBothMatricesAndTheJsonFile(final int ranks) throws Exception
    {
        final Path json = dir.resolve("out/topo.json");
        final Run run = runOnEveryRank(ranks, "--probe", "--probe-bytes", "4K", "--latency-iters", "5",
            "--bandwidth-iters", "3", "--json", json.toString());

        assertEquals(List.of(0), run.statuses.stream().distinct().collect(Collectors.toList()), run.err);
        final List<String> lines = run.out.lines().collect(Collectors.toList());
        final int latency = lines.indexOf("Latency (us): half the median of 5 8-byte round trips, from row to column");
        final int bandwidth =
            lines.indexOf("Bandwidth (GB/s): median of 3 transfers of 4096 bytes, from row to column");
        assertTrue(latency > 0 && bandwidth > latency, run.out);
        assertMatrix(lines.subList(latency, bandwidth), ranks, (from, to) -> from.equals(to) ? "X" : "positive");
        assertMatrix(lines.subList(bandwidth, lines.size()), ranks,
            (from, to) -> from.equals(to) ? "X" : "positive");
        assertTrue(lines.get(lines.size() - 1).startsWith("Degraded links (bandwidth below 0.50 of the median of "
            + "their class)") || lines.stream().anyMatch(l -> l.startsWith("  " + TopoFormatter.DEGRADED)), run.out);

        final JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertEquals("hccl-topo", root.get("tool").asText());
        assertEquals(ranks, root.get("worldSize").asInt());
        assertEquals(1, root.get("nodeCount").asInt());
        assertEquals(ranks, root.get("ranks").size());
        for (int r = 0; r < ranks; r++)
        {
            final JsonNode rank = root.get("ranks").get(r);
            assertEquals(r, rank.get("rank").asInt());
            assertEquals(r, rank.get("localRank").asInt());
            assertEquals(ProcessHandle.current().pid(), rank.get("pid").asLong());
        }
        final JsonNode probe = root.get("probe");
        assertEquals(4096, probe.get("bytes").asLong());
        for (int from = 0; from < ranks; from++)
        {
            for (int to = 0; to < ranks; to++)
            {
                assertEquals(from == to ? "X" : "LOC", root.get("links").get(from).get(to).asText());
                for (final String matrix : List.of("latencyUs", "bandwidthGBps"))
                {
                    final JsonNode cell = probe.get(matrix).get(from).get(to);
                    assertTrue(from == to ? cell.isNull() : cell.asDouble() > 0, matrix + " " + from + "," + to);
                }
            }
        }
        assertEquals(0.5, root.get("degradedRatio").asDouble());
        assertTrue(root.get("degraded").isArray(), root.toString());
    }

    @Test
    void helpIsExitZeroAndUsageErrorsAreExitTwo()
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int help = HcclTopo.run(new String[]{"--help"}, InProcessTopoTest::noCommunicator, null,
            new PrintStream(out, true, StandardCharsets.UTF_8), NOWHERE);
        assertEquals(0, help);
        assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("Usage: hccl-topo"), out::toString);

        for (final String[] args : List.of(new String[]{"--bogus"}, new String[]{"--degraded-ratio", "0"},
            new String[]{"--degraded-ratio", "1.5"}, new String[]{"--probe-bytes", "0"},
            new String[]{"--latency-iters", "0"}, new String[]{"--bandwidth-iters", "-1"},
            new String[]{"--probe-bytes", "lots"}))
        {
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            final int status = HcclTopo.run(args, InProcessTopoTest::noCommunicator, null, NOWHERE,
                new PrintStream(err, true, StandardCharsets.UTF_8));
            assertEquals(2, status, String.join(" ", args));
            assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("hccl-topo: "), err::toString);
        }
    }

    @Test
    void aCommunicatorThatCannotBeCreatedIsExitOne()
    {
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final int status = HcclTopo.run(new String[0], () ->
        {
            throw new IllegalStateException("no rendezvous");
        }, null, NOWHERE, new PrintStream(err, true, StandardCharsets.UTF_8));

        assertEquals(1, status);
        assertEquals("hccl-topo: cannot create the communicator: no rendezvous",
            err.toString(StandardCharsets.UTF_8).trim());
    }

    private static Communicator noCommunicator()
    {
        throw new AssertionError("a usage error or --help must not create a communicator");
    }

    /**
     * Checks the matrix that follows the first line of {@code R0 R1 ...} column labels: a row per rank, labelled,
     * each cell as {@code expected} says ({@code positive}: a number above 0).
     */
    private static void assertMatrix(
        final List<String> lines, final int ranks, final BiFunction<Integer, Integer, String> expected)
    {
        final String labels = IntStream.range(0, ranks).mapToObj(r -> "R" + r).collect(Collectors.joining(" "));
        final int head = IntStream.range(0, lines.size()).filter(i -> lines.get(i).trim().replaceAll(" +", " ")
            .equals(labels)).findFirst().orElseThrow(() -> new AssertionError("no matrix:\n" + String.join("\n",
            lines)));
        for (int from = 0; from < ranks; from++)
        {
            final String[] cells = lines.get(head + 1 + from).trim().split(" +");
            assertEquals(ranks + 1, cells.length, lines.get(head + 1 + from));
            assertEquals("R" + from, cells[0]);
            for (int to = 0; to < ranks; to++)
            {
                final String want = expected.apply(from, to);
                if ("positive".equals(want))
                {
                    assertTrue(Double.parseDouble(cells[1 + to]) > 0, lines.get(head + 1 + from));
                }
                else
                {
                    assertEquals(want, cells[1 + to], lines.get(head + 1 + from));
                }
            }
        }
    }

    private static Run runOnEveryRank(final int ranks, final String... args) throws Exception
    {
        final List<Communicator> comms = Hccl.initAll(ranks,
            CommConfig.builder().environment(Map.of()).worldSize(ranks).conclude());
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
        final ExecutorService pool = Executors.newFixedThreadPool(ranks);
        try
        {
            final List<Future<Integer>> futures = new ArrayList<>();
            for (int r = 0; r < ranks; r++)
            {
                final int rank = r;
                final PrintStream printing = rank == 0 ? new PrintStream(out, true, StandardCharsets.UTF_8) : NOWHERE;
                futures.add(pool.submit(() -> HcclTopo.run(args, () -> comms.get(rank), null, printing, errStream)));
            }
            final List<Integer> statuses = new ArrayList<>();
            for (final Future<Integer> f : futures)
            {
                try
                {
                    statuses.add(f.get(60, TimeUnit.SECONDS));
                }
                catch (final ExecutionException ex)
                {
                    throw new AssertionError("a rank failed: " + ex.getCause(), ex.getCause());
                }
            }
            return new Run(statuses, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        }
        finally
        {
            pool.shutdownNow();
        }
    }

    private record Run(List<Integer> statuses, String out, String err)
    {
    }
}
