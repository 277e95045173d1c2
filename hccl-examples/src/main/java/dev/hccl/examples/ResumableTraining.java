package dev.hccl.examples;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.Hccl;
import dev.hccl.api.ReduceOp;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;

/**
 * Training that survives a lost process: linear regression by mini-batch gradient descent, data-parallel, with a
 * checkpoint after every epoch, for {@code hcclrun --max-restarts} (torchrun's elastic restarts). Rank 0 writes the
 * epoch and the weights to {@code --checkpoint DIR} (a new file, then renamed over the old: a crash leaves the previous
 * one whole); at every start, rank 0 reads the latest and broadcasts it, so that only rank 0's node needs the
 * directory, and every rank resumes after that epoch. At the end every rank checks its weights against the same
 * training run in one process, uninterrupted; rank 0 prints {@code OK}. Exit status 0, 1 when the check fails, 2 on a
 * usage error; a lost peer fails the collective and exits non-zero, so that the launcher restarts the job.
 * <p>
 * {@code bin/hcclrun --max-restarts 3 -np 4 bin/hccl-java dev.hccl.examples.ResumableTraining --checkpoint ckpt}
 */
@Command(name = "ResumableTraining", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Trains a linear model data-parallel, checkpointing every epoch, and resumes from the last "
        + "checkpoint when restarted.")
public final class ResumableTraining implements Callable<Integer>
{
    /** The largest weight difference from the uninterrupted single-process run, relative to the largest weight. */
    static final double TOLERANCE = 1e-9;
    private static final String CHECKPOINT = "checkpoint.bin";

    @Option(names = "--checkpoint", paramLabel = "DIR", required = true,
        description = "Where rank 0 keeps the checkpoint (made if missing).")
    private Path dir;

    @Option(names = "--epochs", paramLabel = "N", defaultValue = "12",
        description = "Epochs (default ${DEFAULT-VALUE}).")
    private int epochs;

    @Option(names = "--epoch-millis", paramLabel = "MS", defaultValue = "0",
        description = "Extra time an epoch takes, to watch a restart (default ${DEFAULT-VALUE}).")
    private long epochMillis;

    @Option(names = "--samples", paramLabel = "N", defaultValue = "4096",
        description = "Samples (default ${DEFAULT-VALUE}).")
    private int samples;

    @Option(names = "--features", paramLabel = "D", defaultValue = "32",
        description = "Features of a sample (default ${DEFAULT-VALUE}).")
    private int features;

    @Option(names = "--steps", paramLabel = "S", defaultValue = "8",
        description = "Steps (mini-batches) per epoch (default ${DEFAULT-VALUE}).")
    private int steps;

    private ResumableTraining()
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
        System.exit(new CommandLine(new ResumableTraining()).execute(args));
    }

    @Override
    public Integer call() throws Exception
    {
        try (Communicator comm = Hccl.init())
        {
            if (steps < 1 || samples % steps != 0 || samples / steps < comm.worldSize() || epochs < 1 || features < 1)
            {
                System.err.printf("ResumableTraining on rank %d: --samples %d must be a multiple of --steps %d, with "
                    + "at least one sample a step for each of the %d ranks; --epochs and --features at least 1%n",
                    comm.rank(), samples, steps, comm.worldSize());
                return 2;
            }
            final double[][] x = new double[samples][features];
            final double[] y = new double[samples];
            generate(x, y);
            // [epochs done, weights...], rank 0's checkpoint or zeros, the same on every rank after the broadcast.
            final ByteBuffer state = ByteBuffer.allocateDirect(8 * (features + 1)).order(ByteOrder.nativeOrder());
            if (comm.rank() == 0)
            {
                load(state);
            }
            comm.broadcast(state, features + 1, DataType.FP64, 0);
            final int done = (int)state.getDouble(0);
            final double[] w = new double[features];
            for (int j = 0; j < features; j++)
            {
                w[j] = state.getDouble(8 * (j + 1));
            }
            if (comm.rank() == 0 && done > 0)
            {
                System.out.printf("resumed after epoch %d from %s (start %s)%n", done, dir.resolve(CHECKPOINT),
                    System.getenv().getOrDefault("HCCL_RESTART_COUNT", "?"));
            }
            final ByteBuffer grad = ByteBuffer.allocateDirect(8 * (features + 1)).order(ByteOrder.nativeOrder());
            for (int epoch = done; epoch < epochs; epoch++)
            {
                final double loss = epoch(x, y, w, comm.rank(), comm.worldSize(), (from, to) ->
                {
                    gradient(x, y, w, from, to, grad);
                    comm.allReduce(grad, grad, features + 1, DataType.FP64, ReduceOp.SUM);
                    return grad;
                });
                if (comm.rank() == 0)
                {
                    save(epoch + 1, w);
                    System.out.printf("epoch %d: loss %.6f%n", epoch + 1, loss);
                }
                Thread.sleep(epochMillis);
            }
            return check(comm.rank(), x, y, w);
        }
    }

    /** One step: the gradient of the squared errors of its samples, and their sum, over every rank's slice. */
    @FunctionalInterface
    private interface Step
    {
        ByteBuffer gradient(int from, int to);
    }

    /**
     * One epoch: each step takes the next {@code samples / steps} samples, this rank's slice of them.
     *
     * @return the mean loss of the epoch's steps, as every rank sees it.
     */
    private double epoch(final double[][] x, final double[] y, final double[] w, final int rank, final int ranks,
        final Step step)
    {
        final int batch = samples / steps;
        double loss = 0;
        for (int s = 0; s < steps; s++)
        {
            final int first = s * batch;
            final ByteBuffer g = step.gradient(first + rank * batch / ranks, first + (rank + 1) * batch / ranks);
            for (int j = 0; j < features; j++)
            {
                w[j] -= 0.5 * g.getDouble(8 * j) / batch;
            }
            loss += g.getDouble(8 * features) / batch / steps;
        }
        return loss;
    }

    /** Writes the gradient of the squared errors of samples [from, to) and their sum after the weights. */
    private void gradient(final double[][] x, final double[] y, final double[] w, final int from, final int to,
        final ByteBuffer out)
    {
        final double[] g = new double[features + 1];
        for (int i = from; i < to; i++)
        {
            double error = -y[i];
            for (int j = 0; j < features; j++)
            {
                error += x[i][j] * w[j];
            }
            for (int j = 0; j < features; j++)
            {
                g[j] += error * x[i][j];
            }
            g[features] += error * error;
        }
        for (int j = 0; j <= features; j++)
        {
            out.putDouble(8 * j, g[j]);
        }
    }

    /** The same training in this process, uninterrupted, against which the ranks' weights are checked. */
    private int check(final int rank, final double[][] x, final double[] y, final double[] w)
    {
        final double[] ref = new double[features];
        final ByteBuffer grad = ByteBuffer.allocate(8 * (features + 1));
        for (int epoch = 0; epoch < epochs; epoch++)
        {
            epoch(x, y, ref, 0, 1, (from, to) ->
            {
                gradient(x, y, ref, from, to, grad);
                return grad;
            });
        }
        double largest = 0;
        double worst = 0;
        for (int j = 0; j < features; j++)
        {
            largest = Math.max(largest, Math.abs(ref[j]));
            worst = Math.max(worst, Math.abs(w[j] - ref[j]));
        }
        final double relative = worst / largest;
        if (!(relative <= TOLERANCE))
        {
            System.out.printf("FAILED on rank %d: the weights differ from the uninterrupted single-process run by %.3g "
                + "(relative), above %.0e%n", rank, relative, TOLERANCE);
            return 1;
        }
        if (rank == 0)
        {
            System.out.printf("OK: after %d epochs the weights match the uninterrupted single-process run (%.3g)%n",
                epochs, relative);
        }
        return 0;
    }

    /** Samples of a fixed random linear model with a little noise, the same on every rank. */
    private void generate(final double[][] x, final double[] y)
    {
        final SplittableRandom random = new SplittableRandom(20261203);
        final double[] truth = new double[features];
        for (int j = 0; j < features; j++)
        {
            truth[j] = random.nextDouble(-1, 1);
        }
        for (int i = 0; i < samples; i++)
        {
            double dot = 0;
            for (int j = 0; j < features; j++)
            {
                x[i][j] = random.nextDouble(-1, 1);
                dot += x[i][j] * truth[j];
            }
            y[i] = dot + 0.01 * random.nextGaussian();
        }
    }

    /** Rank 0: the checkpoint into {@code state}, or zeros when there is none. */
    private void load(final ByteBuffer state) throws IOException
    {
        final Path file = dir.resolve(CHECKPOINT);
        if (!Files.exists(file))
        {
            return;
        }
        try (DataInputStream in = new DataInputStream(Files.newInputStream(file)))
        {
            final int epoch = in.readInt();
            final int d = in.readInt();
            if (d != features)
            {
                throw new IOException(file + " holds " + d + " weights, not --features " + features +
                    ": a checkpoint of another model; remove it or give another --checkpoint");
            }
            state.putDouble(0, epoch);
            for (int j = 0; j < features; j++)
            {
                state.putDouble(8 * (j + 1), in.readDouble());
            }
        }
    }

    /** Rank 0: the weights after {@code epoch} epochs, replacing the previous checkpoint whole or not at all. */
    private void save(final int epoch, final double[] w)
    {
        try
        {
            Files.createDirectories(dir);
            final Path next = dir.resolve(CHECKPOINT + ".next");
            try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(next)))
            {
                out.writeInt(epoch);
                out.writeInt(features);
                for (final double v : w)
                {
                    out.writeDouble(v);
                }
            }
            Files.move(next, dir.resolve(CHECKPOINT), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        }
        catch (final IOException e)
        {
            throw new UncheckedIOException("rank 0 cannot write its checkpoint into " + dir, e);
        }
    }
}
