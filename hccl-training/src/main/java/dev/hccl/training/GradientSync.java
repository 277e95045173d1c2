package dev.hccl.training;

import dev.hccl.api.CommFuture;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Data-parallel gradient synchronisation, as PyTorch DDP's reducer and Horovod's tensor fusion do it: the model's
 * gradients are grouped into buckets, and a bucket's all-reduce starts, asynchronously, as soon as the backward pass
 * has marked its last gradient ready, so that communication overlaps the rest of the backward pass.
 * <pre>{@code
 * GradientSync sync = GradientSync.builder(comm).build(gradients, DataType.FP32);
 * // each step, as the backward pass finishes gradient i (any order):
 * sync.markReady(i);
 * // at the end of the step:
 * sync.await();   // every gradient holds the mean over the ranks, the same bits on every rank
 * }</pre>
 * Buckets start in bucket order on every rank, whatever order the gradients become ready in, so that all ranks
 * issue the same collectives in the same order (DDP's rule): a bucket completed early waits for the ones before it.
 * <p>
 * Bucket sizes: set ({@link GradientSyncBuilder#bucketCapBytes}), or found by {@link Autotune} over the first steps,
 * all ranks alike. Whatever the sizes, the buckets are slices of one layout ({@link BucketPlan}), so changing them
 * moves no gradient: views stay valid.
 * <p>
 * Threads: {@code markReady} may be called from any thread; calls are serialised here. The communicator stays the
 * caller's, open after {@link #close()}; while a step is under way, other collectives on it from other threads must
 * be ordered alike on every rank, as always.
 * <p>
 * Misuse fails without losing anything: {@code await()} with gradients not marked names them and leaves the step as
 * it was (mark them and call it again); marking a gradient twice in a step, or changing a gradient buffer's position
 * or limit, fails the call and changes nothing.
 * <p>
 * Between {@code markReady(i)} and {@code await()} gradient {@code i} belongs to the helper: with views its bucket may
 * be on the wire, or rewritten by the compression (top-k adds its residual), so read or write it only after
 * {@code await()} (clip gradients then). A failed collective ends the step on this rank with its gradients undefined,
 * and so does {@link #close()} in the middle of a step: the communicator stays open, but its ranks have then issued
 * different collectives, so only a step that every rank ends alike leaves it usable.
 */
public final class GradientSync implements AutoCloseable
{
    /** The most unmarked gradients {@link #await()} names. */
    private static final int NAMED_AT_MOST = 10;

    private final Communicator comm;
    private final boolean overlap;
    private final DataType type;
    /** The builder's settings, as they were at build: the builder may change afterwards. */
    private final Compression compression;
    private final boolean average;
    private final long bucketCapBytes;
    private final long firstBucketBytes;
    /** The gradients' layout in bytes, as {@link BucketPlan} lays them: every plan's buckets are slices of these. */
    private final ByteBuffer[] segments;
    /** Top-k's selection scratch, shared by the buckets, whose codecs start one at a time. */
    private final TopKSelector selector = new TopKSelector();
    /** Replaced, between steps, only by autotune; read without the lock by the getters that any thread may call. */
    private volatile BucketSet set;
    /** Null without autotune. */
    private final BucketTuner tuner;
    /** The gradients as the model sees them: its own buffers, or views of the buckets. */
    private final List<ByteBuffer> gradients;
    /** Null when the gradients are views of the buckets; else where each of the model's buffers holds its data. */
    private final int[] positions;
    private final int[] limits;
    private final int[] bytes;
    private final boolean[] marked;
    private final Object lock = new Object();
    private int markedCount;
    /** Steps ended; written by the training thread, read by any ({@link #steps()}). */
    private volatile long step;
    private int fallbacksBefore;
    /** Fallbacks of the bucket sets autotune replaced. */
    private volatile long retiredFallbacks;
    private StepReport lastStep;
    private boolean closed;
    /** While a {@link #noSync()} scope is open: steps accumulate locally and start no collective. */
    private boolean accumulating;
    /** Steps ended inside {@link #noSync()} scopes; read by any thread. */
    private volatile long accumulatedSteps;

    GradientSync(
        final GradientSyncBuilder settings, final DataType type, final int[] bytes, final List<ByteBuffer> own)
    {
        this.comm = settings.comm();
        this.compression = settings.compression();
        this.average = settings.average();
        this.bucketCapBytes = settings.bucketCapBytes();
        this.firstBucketBytes = settings.firstBucketBytes();
        this.type = type;
        this.overlap = settings.overlap();
        this.bytes = bytes;
        final long[] sizes = Arrays.stream(bytes).asLongStream().toArray();
        final BucketPlan plan = BucketPlan.of(sizes, firstBucketBytes, bucketCapBytes);
        this.segments = new ByteBuffer[plan.segmentCount()];
        for (int s = 0; s < segments.length; s++)
        {
            final int size = (int)plan.segmentBytes(s);
            // Registered where the buckets themselves are what the all-reduces send (no compression): within a node
            // the arena then reads them where they lie. Every rank allocates the same segments in the same order.
            segments[s] = size > 0 && compression.kind() == Compression.Kind.NONE ?
                comm.allocateRegistered(size) : ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
        }
        this.set = new BucketSet(plan, segments, this::codec);
        this.tuner = settings.autotune() == null ? null : new BucketTuner(settings.autotune(), sizes, plan,
            bucketCapBytes, firstBucketBytes, comm.rank(), System.nanoTime());
        this.marked = new boolean[bytes.length];
        if (own == null)
        {
            final List<ByteBuffer> views = new ArrayList<>(bytes.length);
            for (int g = 0; g < bytes.length; g++)
            {
                final int b = plan.bucketOf(g);
                views.add(segments[plan.segmentOf(b)].slice((int)(plan.startOf(b) + plan.offsetOf(g)), bytes[g])
                    .order(ByteOrder.nativeOrder()));
            }
            this.gradients = Collections.unmodifiableList(views);
            this.positions = null;
            this.limits = null;
        }
        else
        {
            this.gradients = List.copyOf(own);
            this.positions = own.stream().mapToInt(ByteBuffer::position).toArray();
            this.limits = own.stream().mapToInt(ByteBuffer::limit).toArray();
        }
    }

    /**
     * Starts the settings of a helper over {@code comm}.
     *
     * @param comm the communicator of the data-parallel ranks; it stays open after {@link #close()}.
     * @return the builder.
     */
    public static GradientSyncBuilder builder(final Communicator comm)
    {
        return new GradientSyncBuilder(comm);
    }

    /** The codec of a bucket of {@code size} bytes, as the settings say. */
    private BucketCodec codec(final int size)
    {
        final int count = size / type.size();
        return switch (compression.kind())
        {
            case NONE -> new PlainCodec(comm, type, count, average);
            case FP16, BF16 -> new HalfPrecisionCodec(comm, compression.wireType(), count, average);
            case FP8_E4M3, FP8_E5M2 -> new Fp8Codec(comm, compression.wireType(), count, average);
            case TOP_K -> new TopKCodec(comm, count, compression.fraction(), average, selector);
            case POWER_SGD -> PowerSgdCodec.forBucket(comm, count, compression.rank(), average);
        };
    }

    /**
     * Says that gradient {@code i} holds this rank's value for the current step. When it completes its bucket, and
     * every bucket before it is complete, their collectives start (with overlap on).
     *
     * @param i the gradient, in registration order.
     * @throws IllegalArgumentException when there is no gradient {@code i}, or its buffer's position or limit changed
     *                                  since build.
     * @throws IllegalStateException    when it was already marked in this step, or the helper is closed.
     * @throws dev.hccl.api.HcclException when a collective cannot start.
     */
    public void markReady(final int i)
    {
        synchronized (lock)
        {
            ensureOpen("markReady(" + i + ")");
            if (i < 0 || i >= marked.length)
            {
                throw new IllegalArgumentException(where("markReady(" + i + ")") + "no such gradient; there are " +
                    marked.length + ", from 0 to " + (marked.length - 1));
            }
            if (marked[i])
            {
                throw new IllegalStateException(where("markReady(" + i + ")") + "gradient " + i +
                    " was already marked ready in step " + step + "; call await() to end the step before marking " +
                    "it again");
            }
            if (positions != null && !accumulating)
            {
                copyIn(i); // checks the buffer first: a refused call marks nothing
            }
            marked[i] = true;
            markedCount++;
            if (accumulating)
            {
                return; // the gradient stays where the model accumulates it, for the step that synchronises
            }
            set.marked(i);
            if (overlap)
            {
                startOrEndStep();
            }
        }
    }

    /**
     * Ends the step: waits for every bucket's collective and leaves the reduced values in the gradients, the same
     * bits on every rank.
     *
     * @throws IllegalStateException when gradients were not marked ready (they are named; the step stays as it was),
     *                               or the helper is closed.
     * @throws dev.hccl.api.HcclException when a collective failed; the step is over, its gradients undefined.
     */
    public void await()
    {
        synchronized (lock)
        {
            ensureOpen("await()");
            if (markedCount < marked.length)
            {
                throw new IllegalStateException(where("await()") + unmarked() + " not marked ready; call " +
                    "markReady(i) for each before await() (the step goes on: nothing marked is lost)");
            }
            if (accumulating)
            {
                Arrays.fill(marked, false);
                markedCount = 0;
                accumulatedSteps++;
                return;
            }
            if (positions != null)
            {
                for (int g = 0; g < marked.length; g++)
                {
                    checkUnchanged("await()", g);
                }
            }
            final long start = System.nanoTime();
            boolean ended = false;
            try
            {
                set.startComplete();
                for (final BucketSet.Bucket b : set.buckets)
                {
                    if (b.codec != null)
                    {
                        b.future.join();
                        b.codec.finish(b.flat);
                    }
                    if (positions != null)
                    {
                        copyOut(b);
                    }
                }
                report(System.nanoTime() - start);
                ended = true;
            }
            finally
            {
                endStep();
            }
            if (ended && tuner != null && tuner.searching())
            {
                nextTrial();
            }
        }
    }

    /** The step ended alike on every rank: autotune may measure, and then change the buckets for the next. */
    private void nextTrial()
    {
        final BucketPlan next = tuner.stepEnded(comm, System.nanoTime());
        if (next != null)
        {
            // endStep joined the old set's collectives: nothing of it is under way.
            retiredFallbacks += set.fallbacks();
            fallbacksBefore = 0;
            set = new BucketSet(next, segments, this::codec);
        }
    }

    /**
     * Gradient accumulation, as PyTorch DDP's {@code no_sync()}: until the scope closes, steps start no collective and
     * leave the gradients as the model accumulates them; the first step after it all-reduces the sums, once
     * ({@link NoSync} says how to use it).
     *
     * @return the scope; close it between steps.
     * @throws IllegalStateException in the middle of a step, inside another scope, or when the helper is closed.
     */
    public NoSync noSync()
    {
        synchronized (lock)
        {
            ensureOpen("noSync()");
            if (accumulating)
            {
                throw new IllegalStateException(where("noSync()") + "a noSync() scope is open already; close it " +
                    "first (scopes do not nest)");
            }
            if (markedCount > 0)
            {
                throw new IllegalStateException(where("noSync()") + "in the middle of a step (" + markedCount +
                    " gradients marked); call it between steps, after await()");
            }
            accumulating = true;
            return new NoSync(this::endNoSync);
        }
    }

    /** Closes the {@link #noSync()} scope: the next step synchronises. */
    private void endNoSync()
    {
        synchronized (lock)
        {
            if (markedCount > 0)
            {
                throw new IllegalStateException(where("noSync().close()") + "in the middle of a step (" +
                    markedCount + " gradients marked); call await() to end it inside the scope");
            }
            accumulating = false;
        }
    }

    /**
     * @return the steps ended inside {@link #noSync()} scopes, which started no collective; any thread may read it.
     */
    public long accumulatedSteps()
    {
        return accumulatedSteps;
    }

    /**
     * The gradients: the buffers passed to {@code build}, or the views of the buckets made by {@code buildViews},
     * which the model writes its gradients into.
     *
     * @return the gradients, in registration order.
     */
    public List<ByteBuffer> gradients()
    {
        return gradients;
    }

    /**
     * @return how many buckets the gradients were grouped into.
     */
    public int bucketCount()
    {
        return set.buckets.length;
    }

    /**
     * @param i a gradient, in registration order.
     * @return its bucket; bucket 0 holds the last gradients registered and starts first.
     */
    public int bucketOf(final int i)
    {
        return set.plan.bucketOf(i);
    }

    /**
     * @return the bucket cap of the buckets in use: the builder's, or autotune's trial or choice. Any thread may read
     *         it.
     */
    public long bucketCapBytes()
    {
        return tuner == null ? bucketCapBytes : tuner.bucketCapBytes();
    }

    /**
     * @return the first bucket's cap in use, as {@link #bucketCapBytes()}.
     */
    public long firstBucketBytes()
    {
        return tuner == null ? firstBucketBytes : tuner.firstBucketBytes();
    }

    /**
     * The trials of autotune so far, the same on every rank: each pair of caps tried and its figure. Autotune has
     * chosen once {@link StepReport#tuning()} says {@link StepReport.Tuning#CHOSEN}.
     *
     * @return the trials, in order; empty without autotune.
     */
    public List<AutotuneTrial> autotuneTrials()
    {
        synchronized (lock)
        {
            return tuner == null ? List.of() : tuner.trials();
        }
    }

    /**
     * Buckets that a compression had to all-reduce again in FP32 (an infinity or a NaN) since this GradientSync was
     * built, summed over steps: what {@link StepReport#fallbacks()} gives per step. Any thread may read it (for
     * metrics: {@code hccl-micrometer}'s {@code GradientSyncMeters}); it may lag the step under way.
     *
     * @return the fallbacks; 0 without a 16-bit, 8-bit or PowerSGD compression.
     */
    public long fallbacks()
    {
        return retiredFallbacks + set.fallbacks();
    }

    /**
     * @return the steps completed since this GradientSync was built (failed ones included); any thread may read it.
     */
    public long steps()
    {
        return step;
    }

    /**
     * @return the last completed step's figures, or null before the first.
     */
    public StepReport lastStep()
    {
        synchronized (lock)
        {
            return lastStep;
        }
    }

    /**
     * Waits for the collectives already started (so that none writes into a released buffer) and releases the
     * helper; the communicator stays open. Idempotent.
     */
    @Override
    public void close()
    {
        synchronized (lock)
        {
            if (closed)
            {
                return;
            }
            closed = true;
            set.joinAll();
        }
    }

    /**
     * @param bucket a bucket of a top-k helper.
     * @return what this rank has not sent of it yet.
     */
    FloatBuffer residual(final int bucket)
    {
        return ((TopKCodec)set.buckets[bucket].codec).residual();
    }

    private void copyIn(final int i)
    {
        checkUnchanged("markReady(" + i + ")", i);
        set.buckets[set.plan.bucketOf(i)].flat.put((int)set.plan.offsetOf(i), gradients.get(i), positions[i],
            bytes[i]);
    }

    /** Refuses a call, changing nothing, when a gradient buffer's position or limit moved since build. */
    private void checkUnchanged(final String call, final int i)
    {
        final ByteBuffer own = gradients.get(i);
        if (own.position() != positions[i] || own.limit() != limits[i])
        {
            throw new IllegalArgumentException(where(call) + "gradient " + i + "'s buffer now runs from " +
                own.position() + " to " + own.limit() + ", registered from " + positions[i] + " to " + limits[i] +
                "; keep a gradient buffer's position and limit");
        }
    }

    /**
     * Starts the buckets that are complete; when one cannot start (the communicator failed), the step ends, as a
     * failed {@link #await()} ends it, so that no codec is started twice.
     */
    private void startOrEndStep()
    {
        try
        {
            set.startComplete();
        }
        catch (final RuntimeException ex)
        {
            endStep();
            throw ex;
        }
    }

    private void copyOut(final BucketSet.Bucket b)
    {
        for (final int g : b.members)
        {
            gradients.get(g).put(positions[g], b.flat, (int)set.plan.offsetOf(g), bytes[g]);
        }
    }

    private void report(final long waitNanos)
    {
        final StepReport.Tuning tuning = tuner == null ? StepReport.Tuning.OFF :
            tuner.searching() ? StepReport.Tuning.TRIAL : StepReport.Tuning.CHOSEN;
        lastStep = new StepReport(step, set.buckets.length, waitNanos, set.wireBytes(),
            set.fallbacks() - fallbacksBefore, bucketCapBytes(), firstBucketBytes(), tuning);
    }

    /** Clears the step's state, after success or failure; collectives still under way are waited for. */
    private void endStep()
    {
        set.reset();
        Arrays.fill(marked, false);
        markedCount = 0;
        fallbacksBefore = set.fallbacks();
        step++;
    }

    private String unmarked()
    {
        final List<Integer> names = new ArrayList<>();
        for (int g = 0; g < marked.length && names.size() < NAMED_AT_MOST; g++)
        {
            if (!marked[g])
            {
                names.add(g);
            }
        }
        final int missing = marked.length - markedCount;
        if (missing == 1)
        {
            return "gradient " + names.get(0) + " of " + marked.length + " was";
        }
        return "gradients " + names + (missing > names.size() ? " and " + (missing - names.size()) + " more" : "") +
            " of " + marked.length + " were";
    }

    private void ensureOpen(final String call)
    {
        if (closed)
        {
            throw new IllegalStateException(where(call) + "this GradientSync is closed; build a new one");
        }
    }

    private String where(final String call)
    {
        return "GradientSync." + call + " on rank " + comm.rank() + ", step " + step + ": ";
    }
}
