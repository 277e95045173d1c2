package dev.hccl.bench;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The command line: nccl-tests' flags and defaults, the size sweep, the cases, and usage errors (exit 2) before any
 * communicator is created.
 */
@Timeout(30)
class BenchOptionsTest
{
    @Test
    void defaultsAreNcclTests()
    {
        final BenchOptions o = HcclBench.parse("all_reduce");

        assertEquals(BenchOp.ALL_REDUCE, o.op());
        assertEquals(32L << 20, o.minBytes());
        assertEquals(32L << 20, o.maxBytes());
        assertEquals(1L << 20, o.stepBytes());
        assertEquals(1, o.stepFactor());
        assertEquals(20, o.iters());
        assertEquals(5, o.warmupIters());
        assertTrue(o.settle(), "without -w each size warms until its time settles");
        assertFalse(HcclBench.parse("all_reduce", "-w", "5").settle(), "-w fixes the count");
        assertTrue(o.timeForMinimum(), "without -n small sizes time more operations");
        assertFalse(HcclBench.parse("all_reduce", "-n", "20").timeForMinimum(), "-n fixes the count");
        assertEquals(1, o.check());
        assertEquals(List.of(DataType.FP32), o.types());
        assertEquals(List.of(ReduceOp.SUM), o.ops());
        assertEquals(0, o.root());
        assertEquals(1, o.average());
        assertEquals(List.of(), o.algos());
        assertEquals(List.of("default"), o.algoLabels());
        assertNull(o.minBw());
        assertEquals(PlotStyle.DEFAULT, o.plotStyle());
        assertEquals(BenchOptions.builder(BenchOp.ALL_REDUCE).settle(true).timeForMinimum(true).build(), o);
    }

    @Test
    void everyFlagIsRead()
    {
        final BenchOptions o = HcclBench.parse("reduce", "-b", "8", "-e", "128M", "-f", "2", "-i", "4K", "-n", "7",
            "-w", "3", "-c", "2", "-o", "max", "-d", "bfloat16", "-r", "all", "-a", "3", "-z", "1", "-R", "1",
            "--algo", "ring,tree", "--json", "r.json", "--csv", "r.csv", "--plot", "r.svg", "--plot-y", "time",
            "--plot-y-scale", "linear", "--min-bw", "1.5");

        assertEquals(BenchOptions.builder(BenchOp.REDUCE).sizes(8, 128L << 20).stepBytes(4096).stepFactor(2)
            .iterations(7, 3).check(2).types(List.of(DataType.BF16)).ops(List.of(ReduceOp.MAX))
            .root(BenchOptions.ALL_ROOTS).average(3).blocking(true).registered(true).algos(List.of("ring", "tree"))
            .outputs(Path.of("r.json"), Path.of("r.csv"), Path.of("r.svg"))
            .plotStyle(new PlotStyle(PlotStyle.Quantity.TIME, false)).minBw(1.5).build(), o);
        assertEquals(o, HcclBench.parse("reduce", "--minbytes", "8", "--maxbytes", "128m", "--stepfactor", "2",
            "--stepbytes", "4k", "--iters", "7", "--warmup_iters", "3", "--check", "2", "--op", "max", "--datatype",
            "bfloat16", "--root", "-1", "--average", "3", "--blocking", "1", "--local_register", "2", "--algo", "ring",
            "--algo", "tree",
            "--json", "r.json", "--csv", "r.csv", "--plot", "r.svg", "--plot-y", "TIME", "--plot-y-scale", "LINEAR",
            "--min-bw", "1.5"));
    }

    @Test
    void sizesGrowByFactorOrIncrementWhileAtMostTheEnd()
    {
        assertEquals(List.of(8L, 32L, 128L, 512L, 2048L, 8192L, 32768L),
            HcclBench.parse("all_reduce", "-b", "8", "-e", "64K", "-f", "4").sizes());
        assertEquals(List.of(1000L, 2000L, 3000L),
            HcclBench.parse("all_reduce", "-b", "1000", "-e", "3500", "-i", "1000").sizes());
        assertEquals(List.of(0L), HcclBench.parse("all_reduce", "-b", "0", "-e", "0").sizes());
        // -f wins over -i, as in nccl-tests.
        assertEquals(List.of(1L, 3L, 9L), HcclBench.parse("all_reduce", "-b", "1", "-e", "10", "-f", "3", "-i", "1")
            .sizes());
        assertEquals(31, HcclBench.parse("all_reduce", "-b", "1", "-e", "2147483647", "-f", "2").sizes().size());
        assertEquals(List.of(0L), HcclBench.parse("barrier", "-b", "8", "-e", "1M", "-f", "2").sizes());
    }

    @Test
    void casesNestTypesThenReductionsThenRootsAndSkipIntegerAverages()
    {
        final List<BenchCase> cases = HcclBench.parse("reduce", "-d", "all", "-o", "all", "-r", "all").cases(2);

        // 6 float types x 5 reductions + 5 integer types x 4 reductions, each on 2 roots
        assertEquals((6 * 5 + 5 * 4) * 2, cases.size());
        assertEquals(new BenchCase(DataType.INT8, ReduceOp.SUM, 0), cases.get(0));
        assertEquals(new BenchCase(DataType.INT8, ReduceOp.SUM, 1), cases.get(1));
        assertEquals(new BenchCase(DataType.INT8, ReduceOp.PROD, 0), cases.get(2));
        assertTrue(cases.stream().noneMatch(c -> c.op() == ReduceOp.AVG && !c.type().isFloatingPoint()));
        assertEquals(List.of(new BenchCase(DataType.FP16, null, -1)),
            HcclBench.parse("all_gather", "-d", "half", "-o", "all", "-r", "1").cases(4));
        assertEquals(List.of(new BenchCase(DataType.INT32, null, 3)),
            HcclBench.parse("broadcast", "-d", "int32", "-r", "3").cases(4));
        // Lists, as listed and each once: nccl-tests' names for FP8.
        assertEquals(List.of(new BenchCase(DataType.FP8_E5M2, ReduceOp.MAX, -1),
                new BenchCase(DataType.FP8_E5M2, ReduceOp.SUM, -1), new BenchCase(DataType.FP8_E4M3, ReduceOp.MAX, -1),
                new BenchCase(DataType.FP8_E4M3, ReduceOp.SUM, -1)),
            HcclBench.parse("all_reduce", "-d", "f8e5m2,F8E4M3,f8e5m2", "-o", "max, sum").cases(2));
    }

    @Test
    void problemsThatNeedTheWorldSize()
    {
        assertEquals("-r 4 is not a rank of 4", HcclBench.parse("broadcast", "-r", "4").problemWith(4));
        assertNull(HcclBench.parse("all_reduce", "-r", "4").problemWith(4));
        assertTrue(HcclBench.parse("sendrecv").problemWith(1).startsWith("sendrecv needs at least 2 ranks"));
    }

    @Test
    void usageErrorsExitWithTwoBeforeAnyCommunicatorExists()
    {
        final List<List<String>> bad = List.of(
            List.of(),
            List.of("all_to_all"),
            List.of("all_reduce", "-d", "quad"),
            List.of("all_reduce", "-d", "f8e4m3,"),
            List.of("all_reduce", "-d", "half,quad"),
            List.of("all_reduce", "-o", "xor"),
            List.of("all_reduce", "-o", "avg", "-d", "int32"),
            List.of("all_reduce", "-b", "1M", "-e", "8"),
            List.of("all_reduce", "-e", "2G"),
            List.of("all_reduce", "-b", "0", "-f", "2"),
            List.of("all_reduce", "-n", "0"),
            List.of("all_reduce", "-a", "4"),
            List.of("all_reduce", "-z", "2"),
            List.of("all_reduce", "-R", "3"),
            List.of("all_reduce", "-r", "first"),
            List.of("all_reduce", "-b", "1.5K"),
            List.of("all_reduce", "--plot", "bw.jpg"),
            List.of("all_reduce", "--plot-y", "algbw"),
            List.of("all_reduce", "--plot-y-scale", "ln"),
            List.of("all_reduce", "--min-bw", "-1"),
            List.of("all_reduce", "--no-such-flag"));
        for (final List<String> args : bad)
        {
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            final int status = HcclBench.run(args.toArray(String[]::new), algo ->
            {
                throw new AssertionError("no communicator for a usage error");
            }, new PrintStream(new ByteArrayOutputStream(), true), new PrintStream(err, true, StandardCharsets.UTF_8));

            final String message = err.toString(StandardCharsets.UTF_8);
            assertEquals(2, status, args + ": " + message);
            assertTrue(message.startsWith("hccl-bench: ") && message.contains("Try 'hccl-bench --help'"),
                args + ": " + message);
        }
    }

    @Test
    void helpNamesEveryOperationAndFlag()
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final int status = HcclBench.run(new String[]{"--help"}, algo ->
        {
            throw new AssertionError("no communicator for --help");
        }, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(new ByteArrayOutputStream(), true));

        final String help = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, status);
        for (final String word : List.of("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
            "alltoall", "sendrecv", "barrier", "-b,", "-e,", "-f,", "-i,", "-n,", "-w,", "-c,", "-o,", "-d,", "-r,",
            "-a,", "--algo", "--json", "--csv", "--plot", "--plot-y", "--plot-y-scale", "--min-bw", "Exit status"))
        {
            assertTrue(help.contains(word), word + " missing from\n" + help);
        }
    }
}
