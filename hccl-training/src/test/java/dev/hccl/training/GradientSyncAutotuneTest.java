package dev.hccl.training;

import dev.hccl.api.CommConfig;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static dev.hccl.training.GradientSyncTest.assertReduced;
import static dev.hccl.training.GradientSyncTest.fill;
import static dev.hccl.training.GradientSyncTest.gradients;
import static dev.hccl.training.GradientSyncTest.markAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GradientSync's bucket autotune over three ranks as threads: the trials change the buckets between steps without
 * changing a result, every rank tries and chooses alike, the choice follows the slowest rank's figures, and the
 * settings that cannot work are refused on every rank.
 */
@Timeout(120)
class GradientSyncAutotuneTest extends ThreeRanks
{
    /** The sizes of {@link GradientSyncTest}'s gradients, in bytes of FP32. */
    private static final long[] BYTES = {1200, 0, 28, 8000, 4, 256, 0, 516};
    private static final Autotune SMALL = Autotune.defaults().bucketCaps(256, 1024, 4096, 1 << 20)
        .firstBucketSizes(64, 256, 1 << 20).warmupSteps(1).stepsPerTrial(2);

    /** What a rank saw of one step: its buckets and where their sizes came from. */
    private record Seen(int buckets, long cap, long first, StepReport.Tuning tuning)
    {
    }

    @Test
    void trialsChangeTheBucketsButNeverAResultAndEveryRankChoosesAlike() throws Exception
    {
        for (final boolean views : new boolean[] {false, true})
        {
            final int steps = 30;
            final List<List<Object>> perRank = RankThreads.values(comms, comm ->
            {
                final GradientSyncBuilder builder = GradientSync.builder(comm).bucketCapBytes(2048)
                    .firstBucketBytes(512).autotune(SMALL);
                final List<ByteBuffer> own = gradients(comm.rank(), 0, DataType.FP32);
                final long[] counts = Arrays.stream(BYTES).map(b -> b / 4).toArray();
                try (GradientSync sync = views ? builder.buildViews(counts, DataType.FP32) :
                    builder.build(own, DataType.FP32))
                {
                    final List<ByteBuffer> grads = views ? sync.gradients() : own;
                    final List<Seen> seen = new ArrayList<>();
                    for (int s = 0; s < steps; s++)
                    {
                        for (int g = 0; g < grads.size(); g++)
                        {
                            fill(grads.get(g), comm.rank(), s, g, DataType.FP32);
                        }
                        markAll(sync, comm.rank());
                        sync.await();
                        assertReduced(grads, s, DataType.FP32, true, 1e-6);
                        final StepReport report = sync.lastStep();
                        seen.add(new Seen(report.buckets(), report.bucketCapBytes(), report.firstBucketBytes(),
                            report.tuning()));
                    }
                    return List.of(seen, sync.autotuneTrials());
                }
            });
            for (int r = 1; r < RANKS; r++)
            {
                assertEquals(perRank.get(0), perRank.get(r), "rank " + r + " tuned unlike rank 0 (views " + views +
                    ")");
            }
            @SuppressWarnings("unchecked") final List<Seen> seen = (List<Seen>)perRank.get(0).get(0);
            @SuppressWarnings("unchecked") final List<AutotuneTrial> trials =
                (List<AutotuneTrial>)perRank.get(0).get(1);
            assertEquals(expectedTrials(trials), trials.size(), trials.toString());
            assertEquals(2048, trials.get(0).bucketCapBytes(), "the builder's sizes come first");
            assertEquals(512, trials.get(0).firstBucketBytes());
            final int tuningSteps = trials.size() * (SMALL.warmupSteps() + SMALL.stepsPerTrial());
            for (int s = 0; s < steps; s++)
            {
                assertSame(s < tuningSteps ? StepReport.Tuning.TRIAL : StepReport.Tuning.CHOSEN,
                    seen.get(s).tuning(), "step " + s);
            }
            // The builder's sizes were measured again, warm, after the first stage: their cold first trial is out.
            assertEquals(2048, trials.get(4).bucketCapBytes(), "the builder's sizes measured again: " + trials);
            assertEquals(512, trials.get(4).firstBucketBytes());
            final AutotuneTrial best = trials.subList(1, trials.size()).stream()
                .min((a, b) -> Long.compare(a.medianStepNanos(), b.medianStepNanos())).orElseThrow();
            final Seen last = seen.get(steps - 1);
            assertEquals(best.bucketCapBytes(), last.cap(), "the fastest trial is the choice: " + trials);
            assertEquals(best.firstBucketBytes(), last.first());
            assertEquals(best.buckets(), last.buckets());
            assertTrue(seen.stream().map(Seen::buckets).distinct().count() > 2, "the trials changed the buckets");
        }
    }

    /**
     * The trials SMALL makes after the builder's: each cap, the builder's sizes again (warm), then each first size with
     * the cap that won the first stage, less those that cut the same buckets as a plan tried before.
     */
    private static int expectedTrials(final List<AutotuneTrial> trials)
    {
        final List<BucketPlan> plans = new ArrayList<>(List.of(BucketPlan.of(BYTES, 512, 2048)));
        for (final long cap : SMALL.bucketCaps())
        {
            addIfNew(plans, BucketPlan.of(BYTES, 512, cap));
        }
        final int firstStage = plans.size();
        assertEquals(4, firstStage, "256, 1024 and 1 MiB cut new buckets; 4096 cuts the same as 2048");
        final long bestCap = trials.subList(1, firstStage + 1).stream()
            .min((a, b) -> Long.compare(a.medianStepNanos(), b.medianStepNanos())).orElseThrow()
            .bucketCapBytes();
        for (final long first : SMALL.firstBucketSizes())
        {
            addIfNew(plans, BucketPlan.of(BYTES, first, bestCap));
        }
        return plans.size() + 1;
    }

    private static void addIfNew(final List<BucketPlan> plans, final BucketPlan plan)
    {
        if (plans.stream().noneMatch(p -> p.sameBuckets(plan)))
        {
            plans.add(plan);
        }
    }

    /**
     * The tuner alone, fed made-up times: rank 1 is slow with the smallest buckets, which rank 0 alone would choose;
     * every rank chooses what the slowest rank's figures say.
     */
    @Test
    void theChoiceFollowsTheSlowestRankOnEveryRank() throws Exception
    {
        final long[] sizes = {100, 100, 100, 100};
        final Autotune search = Autotune.defaults().bucketCaps(100, 200).firstBucketSizes(100).warmupSteps(0)
            .stepsPerTrial(1);
        // [rank][trial]: the builder's sizes, cap 100, cap 200, the builder's sizes again
        final long[][] nanos = {{50, 10, 40, 45}, {50, 100, 40, 45}, {50, 10, 40, 45}};
        final List<List<Object>> perRank = RankThreads.values(comms, comm ->
        {
            final BucketTuner tuner = new BucketTuner(search, sizes, BucketPlan.of(sizes, 100, 400), 400, 100,
                comm.rank(), 1000);
            final List<Object> plans = new ArrayList<>();
            long now = 1000;
            for (int t = 0; t < 4; t++)
            {
                assertTrue(tuner.searching());
                now += nanos[comm.rank()][t];
                final BucketPlan next = tuner.stepEnded(comm, now);
                plans.add(next == null ? "same" : next.bucketCount());
            }
            assertTrue(!tuner.searching());
            return List.of(plans, tuner.trials(), tuner.bucketCapBytes());
        });
        for (final List<Object> seen : perRank)
        {
            assertEquals(perRank.get(0), seen);
        }
        assertEquals(List.of(4, 3, 2, 3), perRank.get(0).get(0),
            "cap 100, cap 200, the builder's 400 again, and 200 chosen");
        @SuppressWarnings("unchecked") final List<AutotuneTrial> trials = (List<AutotuneTrial>)perRank.get(0).get(1);
        assertEquals(List.of(50L, 100L, 40L, 45L), trials.stream().map(AutotuneTrial::medianStepNanos).toList());
        assertEquals(200L, perRank.get(0).get(2));
    }

    /**
     * The tuner alone: the builder's sizes were slowest on their first trial, which ran on a cold JIT, and fastest
     * when measured again after the others; they are kept.
     */
    @Test
    void theBuildersSizesAreJudgedByTheirWarmTrial() throws Exception
    {
        final long[] sizes = {100, 100, 100, 100};
        final Autotune search = Autotune.defaults().bucketCaps(100, 200).firstBucketSizes(100).warmupSteps(0)
            .stepsPerTrial(1);
        final long[] nanos = {500, 60, 40, 30}; // the builder's sizes cold, cap 100, cap 200, the builder's warm
        final List<List<Object>> perRank = RankThreads.values(comms, comm ->
        {
            final BucketTuner tuner = new BucketTuner(search, sizes, BucketPlan.of(sizes, 100, 400), 400, 100,
                comm.rank(), 1000);
            final List<Object> plans = new ArrayList<>();
            long now = 1000;
            for (final long n : nanos)
            {
                now += n;
                final BucketPlan next = tuner.stepEnded(comm, now);
                plans.add(next == null ? "same" : next.bucketCount());
            }
            assertTrue(!tuner.searching());
            return List.of(plans, tuner.bucketCapBytes());
        });
        assertEquals(List.of(4, 3, 2, "same"), perRank.get(0).get(0), "the builder's sizes tried again and kept");
        assertEquals(400L, perRank.get(0).get(1));
    }

    /**
     * {@code HCCL_AUTOTUNE=1}, as a launcher sets it for the whole job: a helper with plain buckets tunes them, while
     * one with top-k or PowerSGD, which autotune cannot serve, builds and runs without it instead of failing; the
     * builder's own word comes first.
     */
    @Test
    void theLaunchersSettingTunesWhereItCanAndNeverBreaksABuild() throws Exception
    {
        final List<Communicator> tuned = Hccl.initAll(RANKS, CommConfig.builder()
            .environment(Map.of(Autotune.SETTING.variable(), "1")).conclude());
        try
        {
            for (final Compression compression : List.of(Compression.none(), Compression.topK(0.5),
                Compression.powerSgd(1)))
            {
                final List<StepReport.Tuning> tuning = RankThreads.values(tuned, comm ->
                {
                    try (GradientSync sync = GradientSync.builder(comm).compression(compression)
                        .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32))
                    {
                        markAll(sync, comm.rank());
                        sync.await();
                        return sync.lastStep().tuning();
                    }
                });
                final StepReport.Tuning expected = compression == Compression.none() ? StepReport.Tuning.TRIAL :
                    StepReport.Tuning.OFF;
                assertEquals(List.of(expected, expected, expected), tuning, "compression " + compression);
            }
            final List<StepReport.Tuning> off = RankThreads.values(tuned, comm ->
            {
                try (GradientSync sync = GradientSync.builder(comm).autotune(null)
                    .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32))
                {
                    markAll(sync, comm.rank());
                    sync.await();
                    return sync.lastStep().tuning();
                }
            });
            assertEquals(List.of(StepReport.Tuning.OFF, StepReport.Tuning.OFF, StepReport.Tuning.OFF), off);
        }
        finally
        {
            tuned.forEach(Communicator::close);
        }
    }

    @Test
    void autotuneWithErrorFeedbackOrUnlikeOnTheRanksIsRefusedOnEveryRank() throws Exception
    {
        for (final Compression compression : List.of(Compression.topK(0.1), Compression.powerSgd(1)))
        {
            for (final RankThreads.Outcome<?> o : RankThreads.each(comms, comm -> GradientSync.builder(comm)
                .autotune(Autotune.defaults()).compression(compression)
                .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32)))
            {
                assertTrue(o.failure() instanceof IllegalArgumentException || o.failure() instanceof HcclException,
                    String.valueOf(o.failure()));
                assertTrue(o.failure().getMessage().contains("refused its gradients") || o.failure().getMessage()
                    .contains("autotune with compression " + compression + ": autotune changes the buckets"),
                    o.failure().getMessage());
            }
        }
        for (final RankThreads.Outcome<?> o : RankThreads.each(comms, comm -> GradientSync.builder(comm)
            .autotune(comm.rank() == 1 ? null : Autotune.defaults())
            .build(gradients(comm.rank(), 0, DataType.FP32), DataType.FP32)))
        {
            final HcclException ex = assertInstanceOf(HcclException.class, o.failure());
            assertEquals(ErrorCode.E_MISMATCH, ex.errorCode());
            assertTrue(ex.getMessage().contains("autotune: rank 0 has on") &&
                ex.getMessage().contains("rank 1 has off"), ex.getMessage());
        }
    }

    @Test
    void theLaunchersSettingAndTheSearchsLimits()
    {
        assertEquals(false, Autotune.SETTING.defaultValue());
        assertEquals(true, Autotune.SETTING.parse(Autotune.SETTING.variable(), "1"));
        assertEquals(false, Autotune.SETTING.parse(Autotune.SETTING.variable(), "0"));
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> Autotune.SETTING.parse(Autotune.SETTING.variable(), "yes"));
        assertTrue(ex.getMessage().contains("HCCL_AUTOTUNE"), ex.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Autotune.defaults().bucketCaps(new long[0]));
        assertThrows(IllegalArgumentException.class, () -> Autotune.defaults().firstBucketSizes(0));
        assertThrows(IllegalArgumentException.class, () -> Autotune.defaults().stepsPerTrial(0));
        assertThrows(IllegalArgumentException.class, () -> Autotune.defaults().warmupSteps(-1));
        assertEquals(7, Autotune.defaults().bucketCaps().length);
    }
}
