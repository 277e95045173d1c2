package dev.hccl.it;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.HcclException;
import dev.hccl.training.BucketPlan;
import dev.hccl.training.Compression;
import dev.hccl.training.GradientSync;
import dev.hccl.training.GradientSyncBuilder;
import dev.hccl.training.StepReport;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.zip.CRC32;

/**
 * One rank of {@link GradientSyncProcessTest}: three steps whose gradients two threads mark ready in an order of this
 * rank's own, each result checked on every rank: against the mean of every rank's values (none, fp16, bf16, within
 * their precision), or bit for bit against top-k with error feedback simulated here for every rank. Prints
 * {@code STEP s OK} per step and {@code RESULT crc} of the last result; {@code REFUSED message} and exit status 3 when
 * the build fails.
 * <p>
 * Arguments, {@code key=value}: {@code compression=} none, fp16, bf16, fp8e4m3, fp8e5m2 or topk:F; {@code layout=}
 * fused or views; {@code model=} odd (zero-length gradients, one larger than the cap, 2,000 tiny ones; the default)
 * or one (a single gradient); {@code odd=R}, a rank built with fp16 whatever the others use; {@code misuse}, which
 * first calls {@code await()} with a gradient not marked and marks one twice, expecting both refused and nothing
 * lost; {@code steps=N} (3 by default); {@code stepMillis=M}, a backward pass of M ms a step. A failed step prints
 * {@code FAILED} with the step and the error, and exits 4. It also prints {@code AUTOTUNE} with the last step's sizes, where they came
 * from and autotune's trials (set by {@code HCCL_AUTOTUNE}).
 */
public final class GradientSyncWorker
{
    private static final int STEPS = 3;
    private static final long FIRST_BUCKET = 4096;
    private static final long BUCKET_CAP = 256 * 1024;

    private GradientSyncWorker()
    {
    }

    private static int[] counts(final String model)
    {
        if ("one".equals(model))
        {
            return new int[] {100_003};
        }
        final List<Integer> counts = new ArrayList<>(List.of(300, 0, 7, 300_000, 1, 64, 0, 129));
        for (int i = 0; i < 2000; i++)
        {
            counts.add(3);
        }
        return counts.stream().mapToInt(Integer::intValue).toArray();
    }

    static float value(final int rank, final int step, final int g, final int e)
    {
        long z = ((long)rank * 1_000_003 + step) * 7919 + g * 104_729L + e;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return ((z ^ (z >>> 31)) >>> 40) / (float)(1 << 23) - 1;
    }

    public static void main(final String[] args) throws Exception
    {
        final Map<String, String> options = new HashMap<>();
        for (final String arg : args)
        {
            final int eq = arg.indexOf('=');
            options.put(eq < 0 ? arg : arg.substring(0, eq), eq < 0 ? "" : arg.substring(eq + 1));
        }
        final Compression wanted = Compression.parse(options.getOrDefault("compression", "none"));
        final int[] counts = counts(options.getOrDefault("model", "odd"));
        try (Communicator comm = Hccl.init())
        {
            final int rank = comm.rank();
            final boolean odd = Integer.toString(rank).equals(options.get("odd"));
            final GradientSyncBuilder builder = GradientSync.builder(comm).firstBucketBytes(FIRST_BUCKET)
                .bucketCapBytes(BUCKET_CAP).compression(odd ? Compression.fp16() : wanted);
            final GradientSync sync;
            try
            {
                sync = "views".equals(options.get("layout")) ?
                    builder.buildViews(Arrays.stream(counts).asLongStream().toArray(), DataType.FP32) :
                    builder.build(allocate(counts), DataType.FP32);
            }
            catch (final HcclException | IllegalArgumentException ex)
            {
                System.out.println("REFUSED " + ex.getMessage());
                System.exit(3);
                return;
            }
            final List<ByteBuffer> grads = sync.gradients();
            final TopKReference topK = wanted.kind() == Compression.Kind.TOP_K ?
                new TopKReference(counts, comm.worldSize(), wanted.fraction()) : null;
            final int steps = Integer.parseInt(options.getOrDefault("steps", Integer.toString(STEPS)));
            final long stepMillis = Long.parseLong(options.getOrDefault("stepMillis", "0"));
            for (int step = 0; step < steps; step++)
            {
                for (int g = 0; g < counts.length; g++)
                {
                    for (int e = 0; e < counts[g]; e++)
                    {
                        grads.get(g).putFloat(grads.get(g).position() + e * 4, value(rank, step, g, e));
                    }
                }
                final List<Integer> order = shuffled(counts.length, new Random(rank * 31L + step));
                if (step == 0 && options.containsKey("misuse"))
                {
                    misuse(sync, order, counts.length);
                }
                else
                {
                    Thread.sleep(stepMillis); // a backward pass
                    markFromTwoThreads(sync, order);
                }
                try
                {
                    sync.await();
                }
                catch (final HcclException ex)
                {
                    System.out.println("FAILED in step " + step + " (" + sync.lastStep().tuning() + "): " +
                        ex.getMessage());
                    System.exit(4);
                }
                if (topK != null)
                {
                    topK.check(grads, step);
                }
                else
                {
                    checkMean(grads, counts, comm.worldSize(), step, tolerance(wanted));
                }
                System.out.println("STEP " + step + " OK");
            }
            final CRC32 crc = new CRC32();
            grads.forEach(b -> crc.update(b.duplicate()));
            System.out.println("RESULT " + Long.toHexString(crc.getValue()));
            final StepReport last = sync.lastStep();
            System.out.println("AUTOTUNE " + last.tuning() + " " + last.firstBucketBytes() + "/" +
                last.bucketCapBytes() + " " + last.buckets() + " buckets, trials " + sync.autotuneTrials());
            sync.close();
        }
    }

    /** How far from the exact mean a result may be, within the compression's precision. */
    private static double tolerance(final Compression compression)
    {
        return switch (compression.kind())
        {
            case FP16 -> 2e-3;
            case BF16 -> 1.6e-2;
            // Values in [-1, 1), scaled so that the largest sum fills half the range; each rank's value and each
            // hop's partial sum rounded to 3 (E4M3) or 2 (E5M2) fraction bits.
            case FP8_E4M3 -> 0.2;
            case FP8_E5M2 -> 0.4;
            default -> 1e-6;
        };
    }

    private static List<ByteBuffer> allocate(final int[] counts)
    {
        final List<ByteBuffer> grads = new ArrayList<>();
        for (final int count : counts)
        {
            grads.add(ByteBuffer.allocateDirect(count * 4).order(ByteOrder.nativeOrder()));
        }
        return grads;
    }

    private static List<Integer> shuffled(final int n, final Random random)
    {
        final List<Integer> order = new ArrayList<>(IntStream.range(0, n).boxed().toList());
        Collections.shuffle(order, random);
        return order;
    }

    /** Half the gradients from this thread, half from another. */
    private static void markFromTwoThreads(final GradientSync sync, final List<Integer> order)
        throws InterruptedException
    {
        final int n = order.size();
        final Throwable[] failed = new Throwable[1];
        final Thread helper = new Thread(() -> order.subList(0, n / 2).forEach(sync::markReady));
        helper.setUncaughtExceptionHandler((t, ex) -> failed[0] = ex);
        helper.start();
        order.subList(n / 2, n).forEach(sync::markReady);
        helper.join();
        if (failed[0] != null)
        {
            throw new AssertionError("the second marking thread failed", failed[0]);
        }
    }

    /** await() with the last gradient not marked, then that gradient marked twice: both refused, nothing lost. */
    private static void misuse(final GradientSync sync, final List<Integer> order, final int n)
    {
        final int last = order.get(n - 1);
        order.subList(0, n - 1).forEach(sync::markReady);
        expectRefusal(sync::await, "gradient " + last + " of " + n + " was not marked ready");
        sync.markReady(last);
        expectRefusal(() -> sync.markReady(last), "gradient " + last + " was already marked ready in step 0");
        System.out.println("MISUSE OK");
    }

    private static void expectRefusal(final Runnable call, final String message)
    {
        try
        {
            call.run();
        }
        catch (final IllegalStateException ex)
        {
            if (ex.getMessage().contains(message))
            {
                return;
            }
            throw new AssertionError("refused, but not with '" + message + "': " + ex.getMessage(), ex);
        }
        throw new AssertionError("not refused: expected '" + message + "'");
    }

    private static void checkMean(
        final List<ByteBuffer> grads, final int[] counts, final int ranks, final int step, final double tolerance)
    {
        for (int g = 0; g < counts.length; g++)
        {
            for (int e = 0; e < counts[g]; e++)
            {
                double sum = 0;
                for (int r = 0; r < ranks; r++)
                {
                    sum += value(r, step, g, e);
                }
                final float got = grads.get(g).getFloat(grads.get(g).position() + e * 4);
                if (!(Math.abs(got - sum / ranks) <= tolerance))
                {
                    throw new AssertionError("step " + step + ", gradient " + g + ", element " + e + ": " + got +
                        ", expected " + sum / ranks);
                }
            }
        }
    }

    /**
     * Top-k with error feedback as every rank does it, simulated here for all ranks: per bucket, each rank adds its
     * residual, sends its k largest magnitudes (ties to the lower index), keeps the rest; the result is the sum of
     * every rank's pairs in rank order, divided by the ranks.
     */
    private static final class TopKReference
    {
        private final int[] counts;
        private final int ranks;
        private final double fraction;
        private final BucketPlan plan;
        /** Per rank, per bucket: what the rank has not sent yet. */
        private final float[][][] residual;

        TopKReference(final int[] counts, final int ranks, final double fraction)
        {
            this.counts = counts;
            this.ranks = ranks;
            this.fraction = fraction;
            this.plan = BucketPlan.of(Arrays.stream(counts).asLongStream().map(c -> 4 * c).toArray(), FIRST_BUCKET,
                BUCKET_CAP);
            this.residual = new float[ranks][plan.bucketCount()][];
            for (int r = 0; r < ranks; r++)
            {
                for (int b = 0; b < plan.bucketCount(); b++)
                {
                    residual[r][b] = new float[(int)(plan.bytes(b) / 4)];
                }
            }
        }

        void check(final List<ByteBuffer> grads, final int step)
        {
            for (int b = 0; b < plan.bucketCount(); b++)
            {
                final int[] members = plan.members(b);
                final int size = residual[0][b].length;
                if (size == 0)
                {
                    continue;
                }
                final int k = (int)Math.max(1, Math.min(size, Math.ceil(fraction * size)));
                final float[] expected = new float[size];
                for (int r = 0; r < ranks; r++)
                {
                    final float[] acc = residual[r][b];
                    for (final int g : members)
                    {
                        final int at = (int)(plan.offsetOf(g) / 4);
                        for (int e = 0; e < counts[g]; e++)
                        {
                            acc[at + e] += value(r, step, g, e);
                        }
                    }
                    final int[] top = IntStream.range(0, size).boxed()
                        .sorted(Comparator.comparingDouble((Integer i) -> -Math.abs(acc[i]))).limit(k)
                        .mapToInt(Integer::intValue).toArray();
                    for (final int i : top)
                    {
                        expected[i] += acc[i];
                        acc[i] = 0;
                    }
                }
                for (final int g : members)
                {
                    final int at = (int)(plan.offsetOf(g) / 4);
                    for (int e = 0; e < counts[g]; e++)
                    {
                        final float want = expected[at + e] / ranks;
                        final float got = grads.get(g).getFloat(grads.get(g).position() + e * 4);
                        if (Float.floatToRawIntBits(got) != Float.floatToRawIntBits(want))
                        {
                            throw new AssertionError("top-k step " + step + ", gradient " + g + ", element " + e +
                                ": " + got + ", expected " + want);
                        }
                    }
                }
            }
        }
    }
}
