package dev.hccl.training;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The search of {@link Autotune}, step by step: which caps the next step uses, and when a trial is over, its figure
 * from every rank's measurements. {@link GradientSync} says when each synchronising step ended; a step's time runs
 * from the end of the one before (or the build), so it holds the computation, the communication the computation did
 * not hide, and what the communication took from the computation on shared cores; the answer is the plan to use from
 * the next step on.
 * <p>
 * Same on every rank by construction: the schedule depends only on the settings and the gradient sizes, which the
 * ranks compared at build, and each figure comes from an all-reduce (MAX) of the ranks' step times, so every rank sees
 * the same numbers and breaks ties alike (the earlier trial wins).
 * <p>
 * Called under the helper's lock, but for the caps in use, which any thread may read.
 */
final class BucketTuner
{
    private static final Logger LOG = LoggerFactory.getLogger(BucketTuner.class);
    private static final double MIB = 1 << 20;

    /** A pair of caps and its plan. */
    private record Candidate(long cap, long first, BucketPlan plan)
    {
    }

    private final Autotune settings;
    private final long[] gradientBytes;
    private final List<Candidate> queue = new ArrayList<>();
    private final List<AutotuneTrial> trials = new ArrayList<>();
    private final List<Candidate> tried = new ArrayList<>();
    private final ByteBuffer samples;
    private final int rank;
    /** The candidate being measured; after the search, the choice. Any thread may read the caps. */
    private volatile Candidate current;
    private boolean secondStage;
    /** Whether the builder's sizes, first tried on a cold JIT, are queued or measured again. */
    private boolean remeasured;
    private boolean done;
    private int stepInTrial;
    /** When the last step ended, or the tuner was made. */
    private long lastEnd;
    private int stepsTuning;

    /**
     * @param settings      the search.
     * @param gradientBytes each gradient's size, in registration order.
     * @param initial       the plan of the builder's caps, tried first.
     * @param initialCap    the builder's bucket cap.
     * @param initialFirst  the builder's first-bucket cap.
     * @param rank          this rank, which logs the choice when it is 0.
     * @param now           {@link System#nanoTime()} now: the first step's start.
     */
    BucketTuner(final Autotune settings, final long[] gradientBytes, final BucketPlan initial, final long initialCap,
        final long initialFirst, final int rank, final long now)
    {
        this.lastEnd = now;
        this.settings = settings;
        this.gradientBytes = gradientBytes;
        this.rank = rank;
        this.samples = ByteBuffer.allocateDirect(settings.stepsPerTrial() * Long.BYTES).order(ByteOrder.nativeOrder());
        this.current = new Candidate(initialCap, initialFirst, initial);
        for (final long cap : settings.bucketCaps())
        {
            enqueue(cap, initialFirst);
        }
    }

    /**
     * @return whether trials are still under way: the helper then measures its calls.
     */
    boolean searching()
    {
        return !done;
    }

    /**
     * A synchronising step ended on this rank; every rank calls it at the same step. At a trial's end it all-reduces
     * the trial's step times (collective).
     *
     * @param comm the communicator.
     * @param now  {@link System#nanoTime()} at the step's end.
     * @return the plan for the next step when it changes, else null.
     */
    BucketPlan stepEnded(final Communicator comm, final long now)
    {
        final long nanos = now - lastEnd;
        lastEnd = now;
        stepsTuning++;
        final int measured = stepInTrial - settings.warmupSteps();
        stepInTrial++;
        if (measured < 0)
        {
            return null;
        }
        samples.putLong(measured * Long.BYTES, nanos);
        if (measured < settings.stepsPerTrial() - 1)
        {
            return null;
        }
        comm.allReduce(samples, samples, settings.stepsPerTrial(), DataType.INT64, ReduceOp.MAX);
        final long[] slowest = new long[settings.stepsPerTrial()];
        samples.asLongBuffer().get(slowest);
        final AutotuneTrial trial = new AutotuneTrial(current.cap(), current.first(), current.plan().bucketCount(),
            median(slowest));
        trials.add(trial);
        tried.add(current);
        LOG.debug("GradientSync autotune on rank {}: trial {}: {} MiB buckets, first {} MiB, {} buckets: median " +
            "step {} ms over {}", rank, trials.size(), trial.bucketCapBytes() / MIB, trial.firstBucketBytes() / MIB,
            trial.buckets(), trial.medianStepNanos() / 1e6, Arrays.toString(slowest));
        stepInTrial = 0;
        if (queue.isEmpty() && !remeasured && tried.size() > 1)
        {
            // The first trial ran while the JIT compiled the step's code: measure the builder's sizes again, warm,
            // before the best cap is taken for the second stage (or, without one, before the choice).
            remeasured = true;
            queue.add(tried.get(0));
        }
        else if (queue.isEmpty() && !secondStage)
        {
            secondStage = true;
            final Candidate best = best();
            for (final long first : settings.firstBucketSizes())
            {
                enqueue(best.cap(), first);
            }
        }
        if (queue.isEmpty())
        {
            done = true;
            final Candidate chosen = best();
            final boolean changed = chosen != current;
            current = chosen;
            if (rank == 0)
            {
                LOG.info("GradientSync autotune chose {} MiB buckets, first bucket {} MiB ({} buckets, {} ms a " +
                    "step; {} ms with the caps it was built with) after {} trials in {} steps",
                    chosen.cap() / MIB, chosen.first() / MIB, chosen.plan().bucketCount(),
                    String.format("%.2f", figureOf(chosen) / 1e6), String.format("%.2f", figureOf(tried.get(0)) /
                        1e6), trials.size(), stepsTuning);
            }
            return changed ? chosen.plan() : null;
        }
        current = queue.remove(0);
        return current.plan();
    }

    /**
     * @return the caps in use now: the one measured, or the choice.
     */
    long bucketCapBytes()
    {
        return current.cap();
    }

    long firstBucketBytes()
    {
        return current.first();
    }

    /**
     * @return the trials so far, in order.
     */
    List<AutotuneTrial> trials()
    {
        return List.copyOf(trials);
    }

    /** Queues a pair unless a pair already queued, tried or under way cuts the same buckets. */
    private void enqueue(final long cap, final long first)
    {
        final BucketPlan plan = BucketPlan.of(gradientBytes, first, cap);
        final boolean seen = plan.sameBuckets(current.plan()) ||
            queue.stream().anyMatch(c -> c.plan().sameBuckets(plan)) ||
            tried.stream().anyMatch(c -> c.plan().sameBuckets(plan));
        if (!seen)
        {
            queue.add(new Candidate(cap, first, plan));
        }
    }

    /** The fastest trial; the earlier wins a tie. Once the builder's sizes were measured warm, their cold trial is out. */
    private Candidate best()
    {
        final int from = tried.lastIndexOf(tried.get(0)) > 0 ? 1 : 0;
        int best = from;
        for (int t = from + 1; t < trials.size(); t++)
        {
            if (trials.get(t).medianStepNanos() < trials.get(best).medianStepNanos())
            {
                best = t;
            }
        }
        return tried.get(best);
    }

    /** A candidate's figure: its latest trial's, the warm one for the builder's sizes. */
    private long figureOf(final Candidate c)
    {
        return trials.get(tried.lastIndexOf(c)).medianStepNanos();
    }

    private static long median(final long[] values)
    {
        final long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
