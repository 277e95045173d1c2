package dev.hccl.bench.jmh;

import dev.hccl.api.DataType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs every benchmark of the suite once, in this JVM, through JMH's own runner, with the smallest parameters and
 * iterations of 100 ms: the suite keeps compiling, its generated code stays in step with JMH, and each benchmark
 * still runs to a positive score. These are smoke runs, not measurements.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class BenchmarkSuiteTest
{
    private static final String PACKAGE = "dev\\.hccl\\.bench\\.jmh\\.";
    /** SUM, PROD, MAX, MIN. */
    private static final int REDUCE_OPS = 4;

    @Test
    void everyKernelRunsAndReportsBandwidth() throws RunnerException
    {
        final Collection<RunResult> results = run(options(ReduceKernelBenchmark.class)
            .param("size", "4096"));

        // Every data type times SUM, PROD, MAX, MIN, plus the copy.
        assertEquals(DataType.values().length * REDUCE_OPS + 1, results.size(), "runs");
        assertEquals(Set.of("copy", "reduce"), methods(results));
        for (final RunResult result : results)
        {
            assertPositive(result);
            final Result<?> gigabytes = result.getSecondaryResults().get("gigabytes");
            assertNotNull(gigabytes, () -> label(result) + ": no gigabytes counter");
            assertTrue(gigabytes.getScore() > 0, () -> label(result) + ": " + gigabytes);
        }
    }

    @Test
    void everyCollectiveRuns() throws RunnerException
    {
        final Collection<RunResult> results = run(options(CollectiveBenchmark.class)
            .param("worldSize", "2")
            .param("size", "8"));

        assertEquals(Set.of("allGather", "allReduce", "allToAll", "broadcast", "reduceScatter"), methods(results));
        assertEquals(5, results.size(), "runs");
        results.forEach(BenchmarkSuiteTest::assertPositive);
    }

    @Test
    void everyFrameBenchmarkRuns() throws RunnerException
    {
        final Collection<RunResult> results = run(options(FrameBenchmark.class)
            .param("payloadBytes", "0"));

        assertEquals(Set.of("burst", "oneWay"), methods(results));
        assertEquals(2, results.size(), "runs");
        results.forEach(BenchmarkSuiteTest::assertPositive);
    }

    private static ChainedOptionsBuilder options(final Class<?> benchmark)
    {
        return new OptionsBuilder()
            .include(PACKAGE + benchmark.getSimpleName() + "\\.")
            // In this JVM: surefire has already given it the JVM flags, and a fork per run would take seconds.
            .forks(0)
            .warmupIterations(1)
            .warmupTime(TimeValue.milliseconds(100))
            .measurementIterations(1)
            .measurementTime(TimeValue.milliseconds(100))
            .shouldFailOnError(true)
            .verbosity(VerboseMode.SILENT);
    }

    private static Collection<RunResult> run(final ChainedOptionsBuilder options) throws RunnerException
    {
        return new Runner(options.build()).run();
    }

    private static Set<String> methods(final Collection<RunResult> results)
    {
        final Set<String> names = new TreeSet<>();
        for (final RunResult result : results)
        {
            final String benchmark = result.getParams().getBenchmark();
            names.add(benchmark.substring(benchmark.lastIndexOf('.') + 1));
        }
        return names;
    }

    private static void assertPositive(final RunResult result)
    {
        final double score = result.getPrimaryResult().getScore();
        assertTrue(score > 0 && Double.isFinite(score), () -> label(result) + ": score " + score);
    }

    private static String label(final RunResult result)
    {
        final List<String> params = new ArrayList<>();
        for (final String key : result.getParams().getParamsKeys())
        {
            params.add(key + "=" + result.getParams().getParam(key));
        }
        return result.getParams().getBenchmark() + " " + params;
    }
}
