package dev.hccl.algorithms;

import dev.hccl.algorithms.CollectiveCase.Entry;
import dev.hccl.api.DataType;
import dev.hccl.api.Operation;
import dev.hccl.api.ReduceOp;
import dev.hccl.api.spi.CollectiveAlgorithm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.arbitrary;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

/**
 * Every algorithm of the module against a reference computed in the test: world sizes 1 to 9, counts from 0 to
 * large and not divisible by the world size, every data type and reduction, in place and out of place, several roots.
 * <p>
 * A new algorithm joins by its row in {@link AlgorithmCatalog#standard()}: {@link #TABLE} takes every algorithm the
 * catalog has for the operations this matrix knows. The product is cut where it buys nothing:
 * every type runs the small counts (where type-specific tails and partitions show), the large and multi-segment
 * counts run FP32 (4-byte elements) and INT8 (1-byte elements, the odd partitions).
 */
@Timeout(600)
class AlgorithmMatrixTest
{
    /**
     * The algorithms under test, one row per (algorithm, operation): every algorithm the catalog has for the five
     * operations this matrix knows, so that a newly registered one cannot go untested.
     */
    static final List<Entry> TABLE = table();

    private static List<Entry> table()
    {
        final List<Entry> rows = new ArrayList<>();
        final AlgorithmCatalog catalog = AlgorithmCatalog.standard();
        for (final Operation op : new Operation[] {
            Operation.ALL_REDUCE, Operation.ALL_GATHER, Operation.REDUCE_SCATTER, Operation.BROADCAST, Operation.REDUCE})
        {
            for (final CollectiveAlgorithm algorithm : catalog.algorithmsFor(op))
            {
                rows.add(new Entry(algorithm, op));
            }
        }
        return List.copyOf(rows);
    }

    private static final int MAX_WORLD = 9;
    /** Segment size for most cases: large counts still make many segments. */
    private static final int SEGMENT_BYTES = 4096;
    /** A small segment size, with a count that cuts each rank's chunk into several segments. */
    private static final int SMALL_SEGMENT_BYTES = 256;
    private static final int SEGMENTS_PER_CHUNK = 3;
    private static final int[] LARGE_COUNTS = { 1009, 65537 };
    private static final DataType[] LARGE_TYPES = { DataType.FP32, DataType.INT8 };
    private static final ReduceOp[] OPS = { ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN };
    private static final DataType[] NONDETERMINISTIC_TYPES = {
        DataType.FP32, DataType.FP16, DataType.BF16, DataType.FP8_E4M3, DataType.FP8_E5M2 };
    private static final int DETERMINISM_RUNS = 3;
    private static final int BARRIER_SLACK_SECONDS = 15;
    /** Few shrink cycles: a hung case costs a minute each time it is tried. */
    private static final int SHRINK_CYCLES = 5;

    /**
     * Which share of {@link #matrix()}'s cases this run checks, 0 to {@value #SHARES_PROPERTY} - 1: the module's pom
     * runs its tests once with each kernel family, and each run takes every other case, so that the matrix costs the
     * time of one run. The product of algorithm and kernel family buys nothing: the algorithms reach the kernels
     * through one interface, and VectorKernelsTest checks the families against each other bit for bit at every
     * offset and length.
     */
    static final String SHARE_PROPERTY = "hccl.test.matrixShare";
    /** Into how many shares the cases are cut; 1 (every case) unless set. */
    static final String SHARES_PROPERTY = "hccl.test.matrixShares";

    static Stream<Arguments> matrix()
    {
        final int shares = Integer.getInteger(SHARES_PROPERTY, 1);
        final int share = Integer.getInteger(SHARE_PROPERTY, 0);
        if (shares < 1 || share < 0 || share >= shares)
        {
            throw new IllegalArgumentException(SHARE_PROPERTY + " " + share + " of " + SHARES_PROPERTY + " " + shares);
        }
        final List<Arguments> arguments = new ArrayList<>();
        int row = 0;
        for (final Entry entry : TABLE)
        {
            // Cases alternate between the shares: each of two holds every row of the table, at odd world sizes in
            // one and even in the other (nine sizes a row, so the parity turns from one row to the next).
            for (int n = 1; n <= MAX_WORLD; n++, row++)
            {
                if (row % shares == share)
                {
                    arguments.add(Arguments.of(entry, n));
                }
            }
        }
        return arguments.stream();
    }

    @ParameterizedTest(name = "{0} n={1}")
    @MethodSource("matrix")
    void matchesTheReference(final Entry entry, final int n) throws Exception
    {
        final List<String> failures = new ArrayList<>();
        final int[] count = { 0 };

        final List<Supplier<CollectiveCase>> cases = new ArrayList<>();
        for (final int c : smallCounts(n))
        {
            addCases(cases, entry, n, DataType.values(), c);
        }
        for (final int c : LARGE_COUNTS)
        {
            addCases(cases, entry, n, LARGE_TYPES, c);
        }
        runCases(n, SEGMENT_BYTES, null, cases, (c, outputs) -> checkAll(c, outputs, failures, count));

        final List<Supplier<CollectiveCase>> segmented = new ArrayList<>();
        for (final DataType type : LARGE_TYPES)
        {
            final int c = SEGMENTS_PER_CHUNK * n * (SMALL_SEGMENT_BYTES / type.size()) + 5;
            addCases(segmented, entry, n, new DataType[] { type }, c);
        }
        runCases(n, SMALL_SEGMENT_BYTES, null, segmented, (c, outputs) -> checkAll(c, outputs, failures, count));

        assertTrue(failures.isEmpty(), () -> failures.size() + " of " + count[0] + " cases failed, the first: " +
            String.join("\n", failures.subList(0, Math.min(5, failures.size()))));
        assertEquals(cases.size() + segmented.size(), count[0], "cases checked");
    }

    static Stream<Arguments> determinism()
    {
        final List<Arguments> arguments = new ArrayList<>();
        for (final Entry entry : TABLE)
        {
            if (entry.reduces())
            {
                for (final int n : new int[] { 3, 6, 8 })
                {
                    arguments.add(Arguments.of(entry, n));
                }
            }
        }
        return arguments.stream();
    }

    /**
     * Random floating-point inputs, whose sum depends on the order of the additions, with messages delivered in
     * random orders: every run and every rank must still produce the same bits.
     */
    @ParameterizedTest(name = "{0} n={1}")
    @MethodSource("determinism")
    void sameBitsWhateverTheArrivalOrder(final Entry entry, final int n) throws Exception
    {
        final int count = 1009;
        for (final DataType type : NONDETERMINISTIC_TYPES)
        {
            final long seed = 31L * n + type.ordinal();
            final int root = n / 2;
            byte[][] first = null;
            for (int run = 0; run < DETERMINISM_RUNS; run++)
            {
                final List<byte[][]> outputs = new ArrayList<>();
                final List<Supplier<CollectiveCase>> cases = List.of(
                    () -> CollectiveCase.of(entry, n, type, ReduceOp.SUM, count, false, root, seed, false));
                runCases(n, SMALL_SEGMENT_BYTES, 1000L + run, cases, (c, out) -> outputs.add(out));
                final byte[][] out = outputs.get(0);
                if (entry.operation() == Operation.ALL_REDUCE)
                {
                    for (int r = 1; r < n; r++)
                    {
                        assertArrayEquals(out[0], out[r], entry + " " + type + " run " + run + ": rank " + r +
                            " differs from rank 0");
                    }
                }
                if (first == null)
                {
                    first = out;
                }
                else
                {
                    for (int r = 0; r < n; r++)
                    {
                        assertArrayEquals(first[r], out[r], entry + " " + type + " run " + run + ": rank " + r +
                            " differs from run 0");
                    }
                }
            }
        }
    }

    /**
     * Random shapes: any world size to 9, count to 5000, type, reduction, segment size, placement and root.
     */
    @Test
    void randomShapesMatchTheReference()
    {
        final int[] segmentSizes = { 8, 64, 256, 1024, 4096 };
        qt().withExamples(60).withShrinkCycles(SHRINK_CYCLES).withFixedSeed(20240611L).forAll(
            arbitrary().pick(TABLE), integers().between(1, MAX_WORLD), integers().between(0, 5000), longs().all())
            .checkAssert((entry, n, count, seed) ->
            {
                final Random random = new Random(seed);
                final DataType type = DataType.values()[random.nextInt(DataType.values().length)];
                final ReduceOp op = entry.reduces() ? OPS[random.nextInt(OPS.length)] : null;
                final boolean inPlace = entry.hasPlacement() && random.nextBoolean();
                final int root = entry.rooted() ? random.nextInt(n) : 0;
                // Per-block counts of 5000 would make reduce-scatter and all-gather n times larger: keep them quick.
                final int c = entry.operation() == Operation.ALL_GATHER ||
                    entry.operation() == Operation.REDUCE_SCATTER ? count / n : count;
                final List<String> failures = new ArrayList<>();
                final int[] checked = { 0 };
                try
                {
                    runCases(n, segmentSizes[random.nextInt(segmentSizes.length)], null,
                        List.of(() -> CollectiveCase.of(entry, n, type, op, c, inPlace, root, seed, true)),
                        (cc, outputs) -> checkAll(cc, outputs, failures, checked));
                }
                catch (final Exception ex)
                {
                    throw new AssertionError(ex);
                }
                assertEquals(List.of(), failures);
                assertEquals(1, checked[0]);
            });
    }

    private static Set<Integer> smallCounts(final int n)
    {
        return new LinkedHashSet<>(Arrays.asList(0, 1, n - 1, n + 1, 7, 13));
    }

    private static void addCases(
        final List<Supplier<CollectiveCase>> cases, final Entry entry, final int n, final DataType[] types,
        final int count)
    {
        final ReduceOp[] ops = entry.reduces() ? OPS : new ReduceOp[] { null };
        final boolean[] placements = entry.hasPlacement() ? new boolean[] { false, true } : new boolean[] { false };
        for (final DataType type : types)
        {
            for (final ReduceOp op : ops)
            {
                for (final boolean inPlace : placements)
                {
                    for (final int root : roots(entry, n))
                    {
                        final long seed = cases.size() * 1_000_003L + count;
                        cases.add(() -> CollectiveCase.of(entry, n, type, op, count, inPlace, root, seed, true));
                    }
                }
            }
        }
    }

    private static int[] roots(final Entry entry, final int n)
    {
        if (!entry.rooted())
        {
            return new int[] { 0 };
        }
        if (n <= 4)
        {
            final int[] all = new int[n];
            Arrays.setAll(all, i -> i);
            return all;
        }
        return new int[] { 0, n / 2, n - 1 };
    }

    private static void checkAll(
        final CollectiveCase c, final byte[][] outputs, final List<String> failures, final int[] count)
    {
        count[0]++;
        for (int r = 0; r < outputs.length; r++)
        {
            final String problem = c.check(r, outputs[r]);
            if (problem != null)
            {
                failures.add(problem);
                return;
            }
        }
    }

    /** What happens to each case's outputs, by rank; called on one thread, between cases. */
    @FunctionalInterface
    interface Outcome
    {
        void accept(CollectiveCase c, byte[][] outputs);
    }

    /**
     * Runs cases one after another on the same ranks. A barrier separates them, so that no message of one case can
     * meet a receive of the next; the barrier's action builds the next case (one at a time, to bound memory) and
     * hands the previous one's outputs to {@code outcome}.
     */
    static void runCases(
        final int n, final int segmentBytes, final Long jitterSeed, final List<Supplier<CollectiveCase>> cases,
        final Outcome outcome) throws Exception
    {
        runCases(new int[n], segmentBytes, jitterSeed, cases, outcome);
    }

    /**
     * Runs cases as {@link #runCases(int, int, Long, List, Outcome)} does, on ranks spread over simulated nodes.
     *
     * @param nodeOfRank each rank's node, as {@link LocalGroups} takes it.
     */
    static void runCases(
        final int[] nodeOfRank, final int segmentBytes, final Long jitterSeed,
        final List<Supplier<CollectiveCase>> cases, final Outcome outcome) throws Exception
    {
        final int n = nodeOfRank.length;
        final CollectiveCase[] current = new CollectiveCase[1];
        final byte[][][] outputs = new byte[1][][];
        final int[] next = { 0 };
        final CyclicBarrier barrier = new CyclicBarrier(n, () ->
        {
            if (current[0] != null)
            {
                outcome.accept(current[0], outputs[0]);
            }
            current[0] = next[0] < cases.size() ? cases.get(next[0]++).get() : null;
            outputs[0] = new byte[n][];
        });
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        try (LocalGroups groups = new LocalGroups(nodeOfRank, segmentBytes, jitterSeed))
        {
            groups.run(group ->
            {
                try
                {
                    while (true)
                    {
                        // Longer than a rank's own wait for a message, so that a hung rank reports its case first.
                        barrier.await(LocalGroups.WAIT_SECONDS + BARRIER_SLACK_SECONDS, TimeUnit.SECONDS);
                        final CollectiveCase c = current[0];
                        if (c == null)
                        {
                            return null;
                        }
                        try
                        {
                            outputs[0][group.rank()] = c.run(group);
                        }
                        catch (final Throwable t)
                        {
                            throw new AssertionError(c + ": rank " + group.rank() + " failed", t);
                        }
                    }
                }
                catch (final Throwable t)
                {
                    // Keep the first cause; the others waiting at the barrier are woken to fail after it.
                    failure.compareAndSet(null, t);
                    barrier.reset();
                    if (t instanceof Error error)
                    {
                        throw error;
                    }
                    throw (Exception)t;
                }
            });
        }
        catch (final Exception ex)
        {
            final Throwable first = failure.get();
            if (first != null)
            {
                throw new AssertionError(first.getMessage(), first);
            }
            throw ex;
        }
    }
}
