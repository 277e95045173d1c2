package dev.hccl.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hccl.algorithms.kernel.Copies;
import dev.hccl.algorithms.kernel.Reducers;
import dev.hccl.api.CommConfig;
import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The benchmark with ranks as threads of this JVM ({@link Hccl#initAll}): every operation checked with {@code -c 1},
 * the report files, and the exit statuses for wrong results, low bandwidth and impossible roots.
 */
@Timeout(120)
class InProcessBenchTest
{
    @TempDir
    Path dir;

    @BeforeAll
    static void headless()
    {
        System.setProperty("java.awt.headless", "true");
    }

    static Stream<Arguments> operationsAndWorldSizes()
    {
        return Arrays.stream(BenchOp.values()).flatMap(op -> Stream.of(Arguments.of(op, 2), Arguments.of(op, 3)));
    }

    @ParameterizedTest(name = "{0} over {1} ranks")
    @MethodSource("operationsAndWorldSizes")
    void everyOperationIsRightAndEveryRankAgreesOnTheRows(final BenchOp op, final int ranks) throws Exception
    {
        // Cycle through -a's modes and -z's across the cases: whichever, every rank must end with the same rows.
        final String average = Integer.toString((op.ordinal() + ranks) % 4);
        final String blocking = Integer.toString((op.ordinal() + ranks) % 2);
        final BenchOptions options = HcclBench.parse(op.cliName(), "-b", "8", "-e", "4K", "-f", "8", "-n", "2",
            "-w", "1", "-c", "1", "-r", "all", "-a", average, "-z", blocking);
        final List<Communicator> comms = Hccl.initAll(ranks);
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final List<Sweep> sweeps = InJvmJob.onEveryRank(ranks, rank ->
        {
            try (Communicator comm = comms.get(rank))
            {
                final PrintStream out = rank == 0 ? new PrintStream(printed, true, StandardCharsets.UTF_8) : null;
                return new BenchRunner(comm, options, "default", out).run();
            }
        });

        final Sweep sweep = sweeps.get(0);
        for (int r = 1; r < ranks; r++)
        {
            assertEquals(sweep, sweeps.get(r), "rank " + r + " disagrees with rank 0");
        }
        final List<BenchCase> cases = options.cases(ranks);
        final List<Long> sizes = options.sizes();
        assertEquals(cases.size() * sizes.size(), sweep.rows().size());
        assertEquals(op.hasRoot() ? ranks : 1, cases.size());
        int i = 0;
        for (final BenchCase c : cases)
        {
            for (final long size : sizes)
            {
                final BenchRow row = sweep.rows().get(i++);
                final SizeLayout layout = op.layout(size, c.elementSize(), ranks);
                assertEquals(layout.bytes(c.elementSize()), row.size(), row.toString());
                assertEquals(layout.paramCount(), row.count(), row.toString());
                assertEquals(c.root(), row.root(), row.toString());
                assertEquals(op == BenchOp.BARRIER ? "none" : "float", row.type(), row.toString());
                assertEquals(op.hasReduction() ? "sum" : "none", row.redop(), row.toString());
                for (final Measurement m : List.of(row.outOfPlace(), row.inPlace()))
                {
                    assertEquals(0L, m.wrong(), row.toString());
                    assertTrue(m.timeUs() > 0, row.toString());
                    assertEquals(row.size() / 1e9 / (m.timeUs() / 1e6), m.algBw(), 1e-9 * Math.max(1, m.algBw()));
                    assertEquals(m.algBw() * op.busBwFactor(ranks), m.busBw(), 1e-12);
                }
            }
        }
        assertEquals(0, sweep.outOfBounds());
        assertEquals(sweep.rows().stream().mapToDouble(r -> r.outOfPlace().busBw() + r.inPlace().busBw()).sum() /
            (2.0 * sweep.rows().size()), sweep.avgBusBw(), 1e-12);
        assertEquals(sweep.rows().stream().map(Table::row).collect(Collectors.toList()),
            printed.toString(StandardCharsets.UTF_8).lines().collect(Collectors.toList()));
    }

    /**
     * Blocking sends above the eager budget wait for their receives (rendezvous): the ring of blocking send-receives
     * must still complete, for an even and an odd number of ranks.
     */
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3})
    void blockingSendReceivesAboveTheEagerBudgetComplete(final int ranks) throws Exception
    {
        final BenchOptions options = HcclBench.parse("sendrecv", "-b", "64K", "-e", "64K", "-n", "3", "-w", "1",
            "-c", "1", "-z", "1");
        final List<Communicator> comms = Hccl.initAll(ranks, CommConfig.builder().environment(Map.of())
            .worldSize(ranks).eagerBudget(4096).execTimeout(Duration.ofSeconds(30)).conclude());
        final List<Sweep> sweeps = InJvmJob.onEveryRank(ranks, rank ->
        {
            try (Communicator comm = comms.get(rank))
            {
                return new BenchRunner(comm, options, "default", null).run();
            }
        });
        for (final Sweep sweep : sweeps)
        {
            assertEquals(1, sweep.rows().size());
            assertEquals(0L, sweep.rows().get(0).outOfPlace().wrong());
            assertEquals(0L, sweep.rows().get(0).inPlace().wrong());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("reductions")
    void everyTypeAndReductionIsRight(final BenchOp op) throws Exception
    {
        final int ranks = 3;
        final BenchOptions options = HcclBench.parse(op.cliName(), "-b", "96", "-e", "96", "-n", "1", "-w", "0",
            "-d", "all", "-o", "all", "-r", "2");
        final List<Communicator> comms = Hccl.initAll(ranks);
        final List<Sweep> sweeps = InJvmJob.onEveryRank(ranks, rank ->
        {
            try (Communicator comm = comms.get(rank))
            {
                return new BenchRunner(comm, options, "default", null).run();
            }
        });

        assertEquals(6 * 5 + 5 * 4, sweeps.get(0).rows().size());
        for (final BenchRow row : sweeps.get(0).rows())
        {
            assertEquals(0L, row.outOfPlace().wrong(), row.toString());
            assertEquals(0L, row.inPlace().wrong(), row.toString());
        }
    }

    static Stream<BenchOp> reductions()
    {
        return Stream.of(BenchOp.ALL_REDUCE, BenchOp.REDUCE_SCATTER, BenchOp.REDUCE);
    }

    @Test
    void aLibraryThatCorruptsTwoElementsIsCaughtAndExitsWithOne() throws Exception
    {
        final int ranks = 2;
        final InJvmJob job = new InJvmJob(ranks);
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final List<Integer> status = InJvmJob.onEveryRank(ranks, rank -> HcclBench.run(
            new String[]{"all_reduce", "-b", "8", "-e", "512", "-f", "8", "-n", "2", "-w", "1", "-c", "1"},
            rank == 1 ? algo -> corrupting(job.factory(1).open(algo)) : job.factory(rank),
            rank == 0 ? new PrintStream(out, true, StandardCharsets.UTF_8) : new PrintStream(new ByteArrayOutputStream()),
            new PrintStream(new ByteArrayOutputStream())));

        final String table = out.toString(StandardCharsets.UTF_8);
        assertEquals(List.of(1, 1), status, table);
        final List<String[]> rows = rows(table);
        assertEquals(3, rows.size(), table);
        for (final String[] row : rows)
        {
            // Two elements of rank 1's result are wrong, in every checked run, out of place and in place.
            assertEquals("2", row[8], table);
            assertEquals("2", row[12], table);
        }
        // nccl-tests counts failed checks per rank, not elements: 3 sizes x 2 column groups on one rank.
        assertTrue(table.contains("# Out of bounds values : 6 FAILED"), table);
    }

    @Test
    void theTableSaysWhichAlgorithmRunsAtEachSizeAndWhy() throws Exception
    {
        final int ranks = 4;
        final InJvmJob job = new InJvmJob(ranks);
        final RankZero run = onEveryRank(job, ranks,
            "all_reduce", "-b", "1K", "-e", "64K", "-f", "4", "-n", "1", "-w", "0");

        final List<Integer> status = run.status();
        final String table = run.table();
        assertEquals(List.of(0, 0, 0, 0), status, table);
        final List<String> lines = table.lines().toList();
        final int model = lines.indexOf(lines.stream().filter(l -> l.startsWith("# Cost model: ")).findFirst()
            .orElseThrow(() -> new AssertionError("no cost model line in:\n" + table)));
        assertTrue(lines.get(model).startsWith("# Cost model: 1 node x 4 ranks, defaults: local 4.0 us"), table);
        // One line where the choice changes, each with every candidate's prediction: one-shot to 4 KiB, then H-D_R.
        assertTrue(lines.get(model + 1).matches("# from 1024 B: fullmesh \\(cost model: ring [0-9.]+ us, fullmesh " +
            "[0-9.]+ us, tree [0-9.]+ us, H-D_R [0-9.]+ us\\)"), table);
        assertTrue(lines.get(model + 2).matches("# from 16384 B: H-D_R \\(cost model: ring .*, tree .*, H-D_R .*\\)"),
            table);
        assertEquals(Table.header().get(0), lines.get(model + 3), table);
    }

    /**
     * Without {@code -w} every size warms until its time settles, and the header says so (with {@code -w} it does not,
     * as {@link #filesAreWrittenOncePerRunAndParse} shows); the JSON report says which.
     */
    @Test
    void withoutWEachSizeWarmsUntilItsTimeSettlesAndTheHeaderSaysSo() throws Exception
    {
        final int ranks = 2;
        final InJvmJob job = new InJvmJob(ranks);
        final Path json = dir.resolve("settled.json");
        final RankZero run = onEveryRank(job, ranks,
            "all_reduce", "-b", "8", "-e", "64", "-f", "8", "-n", "2", "--json", json.toString());
        final List<Integer> status = run.status();
        final String table = run.table();
        assertEquals(List.of(0, 0), status, table);
        assertTrue(table.contains("\n# Warm-up: " + Settling.DESCRIPTION + " before each timed run; -w N runs N " +
            "instead\n"), table);
        assertEquals(2, rows(table).size(), table);
        assertTrue(new ObjectMapper().readTree(json.toFile()).get("settings").get("settled").asBoolean(), table);
    }

    /**
     * Without {@code -n} a small size times more than twenty operations, as many as fill {@link
     * TimedOperations#MIN_SECONDS} at its warmed rate, so that one stall does not make the row; the header says so and
     * the JSON report says how many each measurement timed.
     */
    @Test
    void withoutNASmallSizeTimesEnoughOperationsToFillItsMinimumTime() throws Exception
    {
        final int ranks = 2;
        final InJvmJob job = new InJvmJob(ranks);
        final Path json = dir.resolve("timed.json");
        final RankZero run = onEveryRank(job, ranks,
            "all_reduce", "-b", "8", "-e", "8", "--json", json.toString());
        final List<Integer> status = run.status();
        final String table = run.table();
        assertEquals(List.of(0, 0), status, table);
        assertTrue(table.contains("\n# Timed: at least 20 operations at each size and as many as fill 0.1 s at its " +
            "warmed rate (at most 100,000); -n N times N\n"), table);
        final JsonNode report = new ObjectMapper().readTree(json.toFile());
        assertTrue(report.get("settings").get("timedForMinimum").asBoolean(), table);
        for (final String column : List.of("outOfPlace", "inPlace"))
        {
            final JsonNode m = report.get("runs").get(0).get("rows").get(0).get(column);
            final int operations = m.get("operations").asInt();
            // A warmed 8-byte all-reduce between two threads takes well under the 5 ms that twenty would need.
            assertTrue(operations > 20 && operations <= TimedOperations.MAX, column + ": " + operations + "\n" + table);
        }
    }

    @Test
    void filesAreWrittenOncePerRunAndParse() throws Exception
    {
        final int ranks = 2;
        final InJvmJob job = new InJvmJob(ranks);
        final Path json = dir.resolve("out/bench.json");
        final Path csv = dir.resolve("bench.csv");
        final Path png = dir.resolve("bench.png");
        final List<ByteArrayOutputStream> outs = List.of(new ByteArrayOutputStream(), new ByteArrayOutputStream());
        final List<Integer> status = InJvmJob.onEveryRank(ranks, rank -> HcclBench.run(
            new String[]{"all_reduce", "-b", "8", "-e", "8K", "-f", "4", "-n", "2", "-w", "1", "--algo", "ring,tree",
                "-R", "1", "--json", json.toString(), "--csv", csv.toString(), "--plot", png.toString()},
            job.factory(rank), new PrintStream(outs.get(rank), true, StandardCharsets.UTF_8),
            new PrintStream(new ByteArrayOutputStream())));

        final String table = outs.get(0).toString(StandardCharsets.UTF_8);
        assertEquals(List.of(0, 0), status, table);
        assertEquals(List.of("ring", "tree"), job.opened());
        assertEquals("", outs.get(1).toString(StandardCharsets.UTF_8), "only rank 0 prints");
        assertTrue(table.startsWith("# Collective test starting: hccl-bench all_reduce\n" +
            "# nRanks 2 transport inproc minBytes 8 maxBytes 8192 step: 4(factor) warmup iters: 1 iters: 2 " +
            "validation: 1 average: 1 registered: 1\n#\n# Using ranks\n#  Rank  0 Group  0 Pid "), table);
        assertTrue(table.contains("\n#  Rank  1 Group  0 Pid "), table);
        assertTrue(table.contains("\n# Reduction kernels: " + Reducers.description() +
            "\n# Copies between native memory: " + Copies.description() + "\n#\n"), table);
        assertTrue(table.contains("\n# Algorithm: ring (CommConfig.algo)\n# Cost model: 1 node x 2 ranks, defaults: " +
            "local 4.0 us per message, 3.00 GB/s, reduction 7.50 GB/s; network 30.0 us per message, 1.10 GB/s, " +
            "reduction 7.50 GB/s\n# from 8 B: ring (forced by HCCL_ALGO)\n" + Table.header().get(0) + "\n"), table);
        assertTrue(table.contains("\n# Algorithm: tree (CommConfig.algo)\n"), table);
        assertEquals(12, rows(table).size(), table);
        assertEquals(2, table.lines().filter("# Out of bounds values : 0 OK"::equals).count(), table);
        assertTrue(table.endsWith("\n#\n# Plot written to " + png.toAbsolutePath().normalize() + "\n"), table);

        final JsonNode report = new ObjectMapper().readTree(json.toFile());
        assertEquals("hccl-bench", report.get("tool").asText());
        assertEquals("all_reduce", report.get("operation").asText());
        assertEquals(2, report.get("worldSize").asInt());
        assertEquals("inproc", report.get("transport").asText());
        assertEquals(0, report.get("status").asInt());
        assertEquals(2, report.get("ranks").size());
        assertEquals(4, report.get("settings").get("stepFactor").asInt());
        assertEquals(2, report.get("runs").size());
        assertEquals("tree", report.get("runs").get(1).get("algo").asText());
        final JsonNode rows = report.get("runs").get(0).get("rows");
        assertEquals(6, rows.size());
        assertEquals(8192, rows.get(5).get("size").asLong());
        assertEquals(2048, rows.get(5).get("count").asLong());
        assertEquals(0, rows.get(5).get("inPlace").get("wrong").asLong());
        assertTrue(rows.get(5).get("outOfPlace").get("busBw").asDouble() > 0);
        assertEquals(2, rows.get(5).get("outOfPlace").get("operations").asInt(), "-n 2 times exactly 2");
        assertFalse(report.get("settings").get("timedForMinimum").asBoolean());
        assertFalse(table.contains("\n# Timed: "), table);

        final List<CSVRecord> records;
        try (CSVParser parser = CSVParser.parse(csv, StandardCharsets.UTF_8,
            CSVFormat.DEFAULT.builder().setHeader().setSkipHeaderRecord(true).get()))
        {
            assertEquals(ReportFiles.CSV_HEADER, parser.getHeaderNames());
            records = parser.getRecords();
        }
        assertEquals(12, records.size());
        assertEquals("ring", records.get(0).get("algo"));
        assertEquals("tree", records.get(11).get("algo"));
        assertEquals("8", records.get(0).get("size_bytes"));
        assertTrue(records.stream().allMatch(r -> "0".equals(r.get("oop_wrong")) && "0".equals(r.get("ip_wrong"))));
        assertEquals(rows.get(5).get("outOfPlace").get("busBw").asDouble(),
            Double.parseDouble(records.get(5).get("oop_busbw_gbps")));
        assertTrue(records.stream().allMatch(r -> "2".equals(r.get("oop_operations")) &&
            "2".equals(r.get("ip_operations"))));

        final BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image, "not a PNG image");
        assertEquals(BandwidthPlot.WIDTH, image.getWidth());
        assertEquals(BandwidthPlot.HEIGHT, image.getHeight());
    }

    @Test
    void svgPlotHasOneLinePerRunAndNoCheckMeansNoWrongCount() throws Exception
    {
        final int ranks = 3;
        final InJvmJob job = new InJvmJob(ranks);
        final Path svg = dir.resolve("bench.svg");
        final Path csv = dir.resolve("bench.csv");
        final RankZero run = onEveryRank(job, ranks,
            "all_gather", "-b", "96", "-e", "96K", "-f", "32", "-n", "1", "-w", "0", "-c", "0", "-d", "all",
            "--plot", svg.toString(), "--csv", csv.toString());

        final List<Integer> status = run.status();
        final String table = run.table();
        assertEquals(List.of(0, 0, 0), status, table);
        assertEquals(Arrays.asList("null"), job.opened());
        final List<String[]> rows = rows(table);
        assertEquals(DataType.values().length * 3, rows.size(), table);
        assertTrue(rows.stream().allMatch(r -> "N/A".equals(r[8]) && "N/A".equals(r[12])), table);
        final String image = Files.readString(svg, StandardCharsets.UTF_8);
        assertTrue(image.startsWith("<svg"), image.substring(0, Math.min(200, image.length())));
        assertTrue(image.endsWith("</svg>"));
        // Without --algo, the line is named by the algorithms the table's "# from N B: ALGO (" lines say were chosen.
        final List<String[]> from = table.lines().filter(l -> l.startsWith("# from "))
            .map(l -> l.substring("# from ".length()).split(" B: | \\(")).toList();
        assertTrue(!from.isEmpty(), table);
        final StringBuilder auto = new StringBuilder("auto (");
        for (int i = 0; i < from.size(); i++)
        {
            auto.append(i == 0 ? "" : ", ").append(from.get(i)[1]);
            if (i + 1 < from.size())
            {
                auto.append(" &lt; ").append(new BandwidthPlot.SizeFormat().format(Long.parseLong(from.get(i + 1)[0])));
            }
        }
        auto.append(')');
        for (final String type : List.of("int8", "half", "bfloat16", "f8e5m2"))
        {
            final String line = auto + " " + type;
            assertTrue(image.contains(">" + line + "<"), "no legend entry " + line);
        }
        try (CSVParser parser = CSVParser.parse(csv, StandardCharsets.UTF_8,
            CSVFormat.DEFAULT.builder().setHeader().setSkipHeaderRecord(true).get()))
        {
            assertTrue(parser.getRecords().stream().allMatch(r -> r.get("oop_wrong").isEmpty()));
        }
    }

    @Test
    void averageBusBandwidthBelowMinBwExitsWithThreeOnEveryRank() throws Exception
    {
        final int ranks = 2;
        final InJvmJob job = new InJvmJob(ranks);
        final RankZero run = onEveryRank(job, ranks,
            "all_reduce", "-b", "8", "-e", "1K", "-f", "4", "-n", "2", "--min-bw", "1e6");

        final List<Integer> status = run.status();
        final String table = run.table();
        assertEquals(List.of(3, 3), status, table);
        assertTrue(table.contains("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : "), table);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("# Avg bus bandwidth    : ") && l.endsWith(" FAILED")),
            table);

        final InJvmJob again = new InJvmJob(ranks);
        final List<Integer> reachable = InJvmJob.onEveryRank(ranks, rank -> HcclBench.run(
            new String[]{"all_reduce", "-b", "8", "-e", "1K", "-f", "4", "-n", "2", "--min-bw", "0"},
            again.factory(rank), new PrintStream(new ByteArrayOutputStream()),
            new PrintStream(new ByteArrayOutputStream())));
        assertEquals(List.of(0, 0), reachable);
    }

    @Test
    void aRootOutsideTheWorldIsAUsageErrorOnEveryRank() throws Exception
    {
        final int ranks = 2;
        final InJvmJob job = new InJvmJob(ranks);
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final List<Integer> status = InJvmJob.onEveryRank(ranks, rank -> HcclBench.run(
            new String[]{"broadcast", "-r", "2", "-b", "8", "-e", "8"}, job.factory(rank),
            new PrintStream(new ByteArrayOutputStream()),
            rank == 0 ? new PrintStream(err, true, StandardCharsets.UTF_8) : new PrintStream(new ByteArrayOutputStream())));

        assertEquals(List.of(2, 2), status);
        assertEquals("hccl-bench: -r 2 is not a rank of 2\n", err.toString(StandardCharsets.UTF_8));
    }

    /**
     * The rows of a printed table, split into columns: 0 size, 1 count, 2 type, 3 redop, 4 root, then time, algbw,
     * busbw and #wrong out of place (5-8) and in place (9-12).
     */
    /** What every rank's {@code hccl-bench} returned, and what rank 0 printed. */
    record RankZero(List<Integer> status, String table)
    {
    }

    /** Runs {@code hccl-bench} with these arguments on every rank of the job, keeping rank 0's standard output. */
    static RankZero onEveryRank(final InJvmJob job, final int ranks, final String... args) throws Exception
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final List<Integer> status = InJvmJob.onEveryRank(ranks, rank -> HcclBench.run(args, job.factory(rank),
            rank == 0 ? new PrintStream(out, true, StandardCharsets.UTF_8) :
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(new ByteArrayOutputStream())));
        return new RankZero(status, out.toString(StandardCharsets.UTF_8));
    }

    static List<String[]> rows(final String table)
    {
        final List<String[]> rows = new ArrayList<>();
        table.lines().filter(l -> !l.startsWith("#")).forEach(l ->
        {
            final String[] columns = l.trim().split(" +");
            assertEquals(13, columns.length, l);
            rows.add(columns);
        });
        return rows;
    }

    /**
     * A communicator whose allReduce flips one bit of the result's first and last elements: a library bug the check
     * must catch.
     */
    static Communicator corrupting(final Communicator real)
    {
        return (Communicator)Proxy.newProxyInstance(Communicator.class.getClassLoader(),
            new Class<?>[]{Communicator.class}, (proxy, method, args) ->
            {
                try
                {
                    final Object result = method.invoke(real, args);
                    if ("allReduceAsync".equals(method.getName()))
                    {
                        ((CommFuture)result).join();
                        final ByteBuffer recv = (ByteBuffer)args[1];
                        if (recv.remaining() > 0)
                        {
                            final int last = recv.limit() - 1;
                            recv.put(recv.position(), (byte)(recv.get(recv.position()) ^ 1));
                            recv.put(last, (byte)(recv.get(last) ^ 1));
                        }
                    }
                    return result;
                }
                catch (final InvocationTargetException ex)
                {
                    throw ex.getCause();
                }
            });
    }
}
