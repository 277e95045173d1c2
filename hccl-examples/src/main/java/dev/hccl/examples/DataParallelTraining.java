package dev.hccl.examples;

import dev.hccl.api.CommMetrics;
import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.OperationMetrics;
import dev.hccl.api.ReduceOp;
import dev.hccl.training.Compression;
import dev.hccl.training.GradientSync;
import dev.hccl.training.StepReport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.function.IntConsumer;

/**
 * Data-parallel training with {@link GradientSync}: an {@link Mlp} learns a synthetic classification task (labels
 * from a fixed random teacher network, all generated from a seed), each global batch split evenly across the ranks.
 * Each rank computes the gradient of its shard's mean loss straight into the bucket views of a {@link GradientSync}
 * ({@code buildViews}) and marks each gradient ready as the backward pass finishes it, last layer first, so that the
 * buckets' all-reduces overlap the rest of the backward pass; their average is the full batch's gradient.
 * <p>
 * Every rank also trains the same model in-process on all the data with the same global batches (the single-process
 * reference) and checks its weights against it: uncompressed, after the first epoch, the largest difference of a
 * weight, relative to the largest magnitude in its tensor, must be within {@link #WEIGHT_TOLERANCE} (float rounding:
 * only the summation order differs; a lost or doubled contribution shows at once, far above it), and every epoch's
 * loss within {@link #EPOCH_LOSS_TOLERANCE} of the reference's (training amplifies those roundings, so that after a
 * few epochs the weights part by more: 8 epochs of 4 ranks took them from 2e-6 to 8e-4); compressed, the last epoch's
 * loss must be within {@link #HALF_LOSS_TOLERANCE} (fp16, bf16), {@link #FP8_LOSS_TOLERANCE} (fp8e4m3, fp8e5m2) or
 * {@link #TOP_K_LOSS_TOLERANCE} above and {@link #TOP_K_LOSS_BELOW} below (top-k; PowerSGD,
 * {@link #POWER_SGD_LOSS_TOLERANCE} above) of the reference's, relatively. Then
 * it times steps with overlap on and off.
 * Rank 0 prints the losses, the check and the timings; a rank whose check fails prints why. Exit status 0, 1 when the
 * check fails, 2 on a usage error.
 * <p>
 * {@code bin/hcclrun -np 4 bin/hccl-java dev.hccl.examples.DataParallelTraining [--compression bf16] ...}
 */
@Command(name = "DataParallelTraining", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Trains a small MLP data-parallel with GradientSync and checks it against a single-process run.")
public final class DataParallelTraining implements Callable<Integer>
{
    /** Uncompressed: the largest weight difference from the reference, relative to its tensor's largest weight. */
    static final double WEIGHT_TOLERANCE = 1e-4;
    /** Uncompressed: every epoch's loss' difference from the reference's, relative to it. */
    static final double EPOCH_LOSS_TOLERANCE = 1e-3;
    /** Under fp16 or bf16: the last epoch's loss' difference from the reference's, relative to it. */
    static final double HALF_LOSS_TOLERANCE = 0.02;
    /** Under fp8e4m3 or fp8e5m2: the last epoch's loss' difference from the reference's, relative to it. */
    static final double FP8_LOSS_TOLERANCE = 0.05;
    /**
     * Under top-k: the same, looser above, since error feedback sends most of the gradient steps late, so that the
     * loss curve lags the reference's; it bounds the lag (the last loss at most three times the reference's).
     */
    static final double TOP_K_LOSS_TOLERANCE = 2.0;
    /**
     * Under top-k, the other side: a lagging run cannot end much below the reference, so a last loss more than 10%
     * below it means the steps were too large (a sum instead of a mean, say).
     */
    static final double TOP_K_LOSS_BELOW = 0.1;
    /**
     * Under PowerSGD: the last epoch's loss above the reference's, relatively; as top-k's, error feedback sends part
     * of each step late, so the curve lags (below: {@link #TOP_K_LOSS_BELOW}). It bounds the lag at twice the largest
     * measured in DataParallelTrainingTest's settings (4 ranks, 5 epochs: 0.56 at rank 1, 0.32 at rank 2).
     */
    static final double POWER_SGD_LOSS_TOLERANCE = 1.0;
    private static final int CLASSES = 10;

    @Option(names = "--epochs", paramLabel = "N", defaultValue = "8",
        description = "Epochs (default ${DEFAULT-VALUE}).")
    private int epochs;

    @Option(names = "--batch", paramLabel = "B", defaultValue = "256",
        description = "Global batch, a multiple of the world size (default ${DEFAULT-VALUE}).")
    private int batch;

    @Option(names = "--samples", paramLabel = "N", defaultValue = "4096",
        description = "Samples in the dataset (default ${DEFAULT-VALUE}).")
    private int samples;

    @Option(names = "--inputs", paramLabel = "D", defaultValue = "32",
        description = "Features of a sample (default ${DEFAULT-VALUE}).")
    private int inputs;

    @Option(names = "--hidden", paramLabel = "H", defaultValue = "128",
        description = "Width of the two hidden layers (default ${DEFAULT-VALUE}).")
    private int hidden;

    @Option(names = "--compression", paramLabel = "C", defaultValue = "none",
        description = "none, fp16, bf16, fp8e4m3, fp8e5m2, topk:FRACTION or powersgd:RANK (default " +
            "${DEFAULT-VALUE}).")
    private String compression;

    @Option(names = "--lr", paramLabel = "RATE", defaultValue = "0.05",
        description = "Learning rate of SGD with momentum 0.9 (default ${DEFAULT-VALUE}).")
    private float rate;

    @Option(names = "--bucket-kib", paramLabel = "KIB", defaultValue = "64",
        description = "GradientSync's bucket cap, first bucket included (default ${DEFAULT-VALUE}).")
    private int bucketKib;

    @Option(names = "--timed-steps", paramLabel = "N", defaultValue = "20",
        description = "Steps timed with overlap on, and as many off, after training (default ${DEFAULT-VALUE}).")
    private int timedSteps;

    @Option(names = "--seed", paramLabel = "S", defaultValue = "1", description = "Data and model seed.")
    private long seed;

    /** The dataset: {@code inputs} floats a sample, and its class. */
    private record Dataset(float[] x, int[] labels)
    {
    }

    /**
     * What a training run leaves: the model, its parameters after the first epoch, and the loss of each epoch, the mean
     * over its steps of the global batch's loss.
     */
    private record Run(Mlp model, float[][] firstEpoch, double[] losses)
    {
    }

    private DataParallelTraining()
    {
    }

    /**
     * Runs the example on this rank (the communicator from the launcher's environment) and exits with its status.
     *
     * @param args the options; {@code --help} lists them.
     */
    public static void main(final String[] args)
    {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null)
        {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        System.exit(new CommandLine(new DataParallelTraining()).execute(args));
    }

    /**
     * Trains, checks and times, collectively with the other ranks.
     *
     * @return the exit status.
     */
    @Override
    public Integer call()
    {
        final Compression wire;
        try
        {
            wire = Compression.parse(compression);
        }
        catch (final IllegalArgumentException e)
        {
            System.err.println("DataParallelTraining: " + e.getMessage());
            return 2;
        }
        try (Communicator comm = Hccl.init())
        {
            if (batch % comm.worldSize() != 0 || batch > samples || epochs < 1 || timedSteps < 1)
            {
                System.err.printf("DataParallelTraining on rank %d: --batch %d must be a multiple of the world size " +
                    "%d and at most --samples %d; --epochs and --timed-steps at least 1%n", comm.rank(), batch,
                    comm.worldSize(), samples);
                return 2;
            }
            return run(comm, wire);
        }
    }

    private int run(final Communicator comm, final Compression wire)
    {
        final boolean lead = comm.rank() == 0;
        final int n = comm.worldSize();
        final int[] dims = {inputs, hidden, hidden, CLASSES};
        final Dataset data = generate(samples, inputs, seed);

        final long referenceStart = System.nanoTime();
        final Run reference = train(data, dims, null, null);
        final double referenceSeconds = (System.nanoTime() - referenceStart) / 1e9;

        final long[] counts = reference.model.gradientCounts();
        try (GradientSync on = sync(comm, wire, true, counts); GradientSync off = sync(comm, wire, false, counts))
        {
            if (lead)
            {
                System.out.printf(Locale.ROOT, "MLP %d-%d-%d-%d (%,d parameters in %d gradients, %d buckets), %d " +
                    "ranks over %s, %,d samples, global batch %d (%d a rank), compression %s%n", dims[0], dims[1],
                    dims[2], dims[3], total(counts), counts.length, on.bucketCount(), n, comm.transports(), samples,
                    batch, batch / n, wire);
                System.out.printf(Locale.ROOT, "single-process reference trained in-process on every rank in %.1f " +
                    "s%n", referenceSeconds);
            }
            final Run distributed = train(data, dims, comm, on);
            if (lead)
            {
                System.out.println("epoch   loss (data-parallel)   loss (single process)");
                for (int e = 0; e < epochs; e++)
                {
                    System.out.printf(Locale.ROOT, "%5d   %20.6f   %21.6f%n", e + 1, distributed.losses[e],
                        reference.losses[e]);
                }
            }
            final String failure = check(comm, wire, distributed, reference);
            if (anyRank(comm, failure != null))
            {
                System.out.println("rank " + comm.rank() + ": FAILED: " + (failure != null ? failure :
                    "another rank's check failed"));
                return 1;
            }
            time(comm, distributed.model, data, on, off);
            if (lead)
            {
                printMetrics(comm.metrics());
            }
        }
        return 0;
    }

    /** What this rank's communicator did over the whole run, from its own counters ({@link Communicator#metrics}). */
    private static void printMetrics(final CommMetrics metrics)
    {
        System.out.println("this rank's communicator, by operation (Communicator.metrics()):");
        for (final OperationMetrics m : metrics.operations())
        {
            System.out.printf(Locale.ROOT, "  %-13s %,7d calls, %,9.1f MB, mean %8.3f ms (%8.3f ms waiting for other " +
                "ranks), half under %.3f ms%n", m.operation().displayName(), m.count(), m.bytes() / 1e6,
                m.meanNanos() / 1e6, m.count() == 0 ? 0 : m.peerWaitNanos() / 1e6 / m.count(),
                m.latencyAtMostNanos(0.5) / 1e6);
        }
    }

    private GradientSync sync(
        final Communicator comm, final Compression wire, final boolean overlap, final long[] counts)
    {
        final long cap = bucketKib * 1024L;
        return GradientSync.builder(comm).bucketCapBytes(cap).firstBucketBytes(cap).average(true).compression(wire)
            .overlap(overlap).buildViews(counts, DataType.FP32);
    }

    /**
     * Trains for {@code epochs}: data-parallel over {@code comm} through {@code sync}, or, when {@code comm} is null,
     * the single-process reference on the whole of each global batch.
     */
    private Run train(final Dataset data, final int[] dims, final Communicator comm, final GradientSync sync)
    {
        final Mlp model = new Mlp(dims, seed);
        final int ranks = comm == null ? 1 : comm.worldSize();
        final int shard = batch / ranks;
        final int first = comm == null ? 0 : comm.rank() * shard;
        final FloatBuffer[] gradients = sync == null ? ownGradients(model.gradientCounts()) : views(sync);
        final IntConsumer ready = sync == null ? g -> { } : sync::markReady;
        final int steps = samples / batch;
        final double[] losses = new double[epochs];
        float[][] firstEpoch = null;
        final ByteBuffer epochLoss = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
        for (int e = 0; e < epochs; e++)
        {
            final int[] order = permutation(samples, seed * 1_000_003L + e);
            double loss = 0;
            for (int s = 0; s < steps; s++)
            {
                loss += model.forwardBackward(data.x, data.labels, order, s * batch + first, shard, gradients, ready);
                if (sync != null)
                {
                    sync.await();
                }
                model.update(gradients, rate);
            }
            epochLoss.putDouble(0, loss / steps);
            if (comm != null)
            {
                comm.allReduce(epochLoss, epochLoss, 1, DataType.FP64, ReduceOp.AVG);
            }
            losses[e] = epochLoss.getDouble(0);
            if (e == 0)
            {
                firstEpoch = parameters(model);
            }
        }
        return new Run(model, firstEpoch, losses);
    }

    /**
     * @return null when the run matches the reference, else why not.
     */
    private String check(final Communicator comm, final Compression wire, final Run run, final Run reference)
    {
        final double weights = maxRelativeDifference(parameters(run.model), parameters(reference.model));
        final double last = run.losses[epochs - 1];
        final double referenceLast = reference.losses[epochs - 1];
        final double loss = Math.abs(last - referenceLast) / referenceLast;
        final boolean exact = wire.equals(Compression.none());
        final String verdict;
        final boolean ok;
        if (exact)
        {
            final double first = maxRelativeDifference(run.firstEpoch, reference.firstEpoch);
            double epochLoss = 0;
            for (int e = 0; e < epochs; e++)
            {
                epochLoss = Math.max(epochLoss, Math.abs(run.losses[e] - reference.losses[e]) / reference.losses[e]);
            }
            ok = first <= WEIGHT_TOLERANCE && epochLoss <= EPOCH_LOSS_TOLERANCE;
            verdict = String.format(Locale.ROOT, "weights %s the single-process run: after epoch 1 max relative " +
                "difference %.1e (tolerance %.0e), every epoch's loss within %.1e (tolerance %.0e); after epoch %d " +
                "the weights within %.1e", ok ? "match" : "do not match", first, WEIGHT_TOLERANCE, epochLoss,
                EPOCH_LOSS_TOLERANCE, epochs, weights);
        }
        else
        {
            final boolean topK = wire.kind() == Compression.Kind.TOP_K;
            final boolean powerSgd = wire.kind() == Compression.Kind.POWER_SGD;
            final double tolerance = topK ? TOP_K_LOSS_TOLERANCE : powerSgd ? POWER_SGD_LOSS_TOLERANCE :
                wire.equals(Compression.fp16()) || wire.equals(Compression.bf16()) ? HALF_LOSS_TOLERANCE :
                FP8_LOSS_TOLERANCE;
            ok = loss <= tolerance && (!(topK || powerSgd) || last >= referenceLast * (1 - TOP_K_LOSS_BELOW));
            verdict = String.format(Locale.ROOT, "loss %s the single-process run's: last epoch %.6f against " +
                "%.6f, relative difference %.1e (tolerance %.0e); weights' max relative difference %.1e (not " +
                "checked under %s)", ok ? "matches" : "does not match", last, referenceLast, loss, tolerance,
                weights, wire);
        }
        if (ok && comm.rank() == 0)
        {
            System.out.println("OK: " + verdict);
        }
        return ok ? null : verdict;
    }

    /** Steps timed with overlap on and off, alternating in rounds, the first round a warm-up. */
    private void time(
        final Communicator comm, final Mlp model, final Dataset data, final GradientSync on, final GradientSync off)
    {
        final int rounds = 4;
        final int perRound = Math.max(1, timedSteps / (rounds - 1));
        final FloatBuffer[] onViews = views(on);
        final FloatBuffer[] offViews = views(off);
        final int shard = batch / comm.worldSize();
        final int first = comm.rank() * shard;
        final int[] order = permutation(samples, seed * 1_000_003L + epochs);
        final double[] sums = new double[4]; // step nanos on, off; wait nanos on, off
        final int steps = samples / batch;
        int s = 0;
        for (int round = 0; round < rounds; round++)
        {
            for (int mode = 0; mode < 2; mode++)
            {
                final GradientSync sync = mode == 0 ? on : off;
                final FloatBuffer[] gradients = mode == 0 ? onViews : offViews;
                for (int i = 0; i < perRound; i++, s++)
                {
                    final long start = System.nanoTime();
                    model.forwardBackward(data.x, data.labels, order, (s % steps) * batch + first, shard, gradients,
                        sync::markReady);
                    sync.await();
                    model.update(gradients, rate);
                    final long elapsed = System.nanoTime() - start;
                    final StepReport report = sync.lastStep();
                    if (round > 0)
                    {
                        sums[mode] += elapsed;
                        sums[2 + mode] += report.waitNanos();
                    }
                }
            }
        }
        final ByteBuffer means = ByteBuffer.allocateDirect(8 * sums.length).order(ByteOrder.nativeOrder());
        final int timed = perRound * (rounds - 1);
        for (int i = 0; i < sums.length; i++)
        {
            means.putDouble(8 * i, sums[i] / timed / 1e6);
        }
        comm.allReduce(means, means, sums.length, DataType.FP64, ReduceOp.AVG);
        if (comm.rank() == 0)
        {
            System.out.printf(Locale.ROOT, "step time over %d steps each (mean over ranks; forward, backward, " +
                "await, update):%n", timed);
            for (int mode = 0; mode < 2; mode++)
            {
                final double step = means.getDouble(8 * mode);
                final double wait = means.getDouble(8 * (2 + mode));
                System.out.printf(Locale.ROOT, "  overlap %-3s %8.2f ms, waiting for communication %7.2f ms " +
                    "(%4.1f%% of the step)%n", mode == 0 ? "on" : "off", step, wait, 100 * wait / step);
            }
        }
    }

    private static boolean anyRank(final Communicator comm, final boolean flag)
    {
        final ByteBuffer b = ByteBuffer.allocateDirect(4).order(ByteOrder.nativeOrder()).putInt(0, flag ? 1 : 0);
        comm.allReduce(b, b, 1, DataType.INT32, ReduceOp.MAX);
        return b.getInt(0) != 0;
    }

    /**
     * The largest difference of a parameter from its reference, relative to the largest magnitude in the reference's
     * tensor, over every tensor.
     */
    private static double maxRelativeDifference(final float[][] a, final float[][] b)
    {
        double worst = 0;
        for (int p = 0; p < a.length; p++)
        {
            final float[] x = a[p];
            final float[] y = b[p];
            double scale = 0;
            double diff = 0;
            for (int j = 0; j < x.length; j++)
            {
                scale = Math.max(scale, Math.abs(y[j]));
                diff = Math.max(diff, Math.abs(x[j] - y[j]));
            }
            worst = Math.max(worst, scale == 0 ? diff : diff / scale);
        }
        return worst;
    }

    /** A copy of every parameter tensor of a model. */
    private static float[][] parameters(final Mlp model)
    {
        final float[][] copy = new float[model.gradientCounts().length][];
        for (int p = 0; p < copy.length; p++)
        {
            copy[p] = model.parameter(p).clone();
        }
        return copy;
    }

    private static FloatBuffer[] views(final GradientSync sync)
    {
        return sync.gradients().stream().map(ByteBuffer::asFloatBuffer).toArray(FloatBuffer[]::new);
    }

    private static FloatBuffer[] ownGradients(final long[] counts)
    {
        final FloatBuffer[] gradients = new FloatBuffer[counts.length];
        for (int g = 0; g < counts.length; g++)
        {
            gradients[g] = ByteBuffer.allocateDirect((int)counts[g] * 4).order(ByteOrder.nativeOrder())
                .asFloatBuffer();
        }
        return gradients;
    }

    /**
     * Inputs from a standard normal distribution; a sample's class is the largest output of a fixed random teacher
     * {@code V tanh(U x)}.
     */
    private static Dataset generate(final int samples, final int inputs, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed ^ 0x5DEECE66DL);
        final int width = 2 * inputs;
        final double[] u = gaussians(random, width * inputs, 1 / Math.sqrt(inputs));
        final double[] v = gaussians(random, CLASSES * width, 1 / Math.sqrt(width));
        final float[] x = new float[samples * inputs];
        final int[] labels = new int[samples];
        final double[] h = new double[width];
        for (int s = 0; s < samples; s++)
        {
            for (int i = 0; i < inputs; i++)
            {
                x[s * inputs + i] = (float)gaussian(random);
            }
            for (int j = 0; j < width; j++)
            {
                double sum = 0;
                for (int i = 0; i < inputs; i++)
                {
                    sum += u[j * inputs + i] * x[s * inputs + i];
                }
                h[j] = Math.tanh(sum);
            }
            double best = Double.NEGATIVE_INFINITY;
            for (int c = 0; c < CLASSES; c++)
            {
                double sum = 0;
                for (int j = 0; j < width; j++)
                {
                    sum += v[c * width + j] * h[j];
                }
                if (sum > best)
                {
                    best = sum;
                    labels[s] = c;
                }
            }
        }
        return new Dataset(x, labels);
    }

    private static double[] gaussians(final SplittableRandom random, final int count, final double scale)
    {
        final double[] values = new double[count];
        for (int i = 0; i < count; i++)
        {
            values[i] = gaussian(random) * scale;
        }
        return values;
    }

    /** Box-Muller: SplittableRandom has no nextGaussian before Java 17's RandomGenerator default. */
    private static double gaussian(final SplittableRandom random)
    {
        return Math.sqrt(-2 * Math.log(1 - random.nextDouble())) * Math.cos(2 * Math.PI * random.nextDouble());
    }

    /** The same shuffle of {@code 0 .. count - 1} on every rank. */
    private static int[] permutation(final int count, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final int[] order = new int[count];
        for (int i = 0; i < count; i++)
        {
            order[i] = i;
        }
        for (int i = count - 1; i > 0; i--)
        {
            final int j = random.nextInt(i + 1);
            final int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    private static long total(final long[] counts)
    {
        long sum = 0;
        for (final long c : counts)
        {
            sum += c;
        }
        return sum;
    }
}
