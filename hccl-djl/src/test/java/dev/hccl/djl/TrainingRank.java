package dev.hccl.djl;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.Blocks;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.core.Linear;
import ai.djl.nn.pooling.Pool;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.TrainingResult;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.evaluator.Accuracy;
import ai.djl.training.listener.EvaluatorTrainingListener;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.training.Compression;

import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * One rank of a test job (or, with {@code --reference}, the single process it is checked against): trains an MLP or a
 * small CNN on generated data with DJL's PyTorch engine, then writes its parameters to {@code OUT/params-RANK.bin}
 * (float32, block order) and prints {@code RESULT loss=... accuracy=...}: the last epoch's training figures.
 * <p>
 * Arguments: {@code --model mlp|cnn --batch B --epochs E --out DIR [--reference WORLD] [--die-at-step S]
 * [--freeze-at-step S] [--wider-last-rank] [--accumulate K] [--checkpoints DIR] [--lr RATE] [--compression NAME]}. The data (512 records) come from a fixed seed, the same in every process;
 * the first parameters from a seed that differs by rank, rank 0's being the reference's.
 */
public final class TrainingRank
{
    static final int RECORDS = 512;
    static final int CLASSES = 4;
    static final long DATA_SEED = 20261205L;
    static final long SHUFFLE_SEED = 7L;

    private TrainingRank()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            options.put(args[i].substring(2), args[i + 1]);
        }
        final String modelKind = options.getOrDefault("model", "mlp");
        final int batch = Integer.parseInt(options.getOrDefault("batch", "16"));
        final int epochs = Integer.parseInt(options.getOrDefault("epochs", "2"));
        final Path out = Paths.get(options.getOrDefault("out", "."));
        final int dieAtStep = Integer.parseInt(options.getOrDefault("die-at-step", "-1"));
        final int freezeAtStep = Integer.parseInt(options.getOrDefault("freeze-at-step", "-1"));
        final int accumulate = Integer.parseInt(options.getOrDefault("accumulate", "1"));
        final boolean reference = options.containsKey("reference");
        final float rate = Float.parseFloat(options.getOrDefault("lr", "0.5"));

        // Each rank starts from other random parameters: the trainer must give every rank rank 0's, which are the
        // reference's (the same seed).
        Engine.getInstance().setRandomSeed(42 + (reference ? 0 : Integer.parseInt(System.getenv("RANK"))));
        try (NDManager manager = NDManager.newBaseManager(Device.cpu());
             Model model = Model.newInstance(modelKind, Device.cpu()))
        {
            // --wider-last-rank: the last rank builds another model, as a rank started with other settings would.
            final boolean wider = options.containsKey("wider-last-rank") && !reference &&
                Integer.parseInt(System.getenv("RANK")) == Integer.parseInt(System.getenv("WORLD_SIZE")) - 1;
            model.setBlock("cnn".equals(modelKind) ? cnn() : mlp(wider ? 48 : 32));
            final Shape input = "cnn".equals(modelKind) ? new Shape(1, 1, 8, 8) : new Shape(1, 16);
            final ArrayDataset.Builder data = data(manager, modelKind);
            final DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(rate)).build())
                .optDevices(new Device[] {Device.cpu()})
                .addEvaluator(new Accuracy())
                .addTrainingListeners(new EvaluatorTrainingListener());
            if (reference)
            {
                // One process with the global batch, visiting the records in the order of one epoch of all ranks.
                final int world = Integer.parseInt(options.get("reference"));
                final DistributedSampler sampler = new DistributedSampler(batch * world, true, SHUFFLE_SEED, 0, 1);
                try (Trainer trainer = model.newTrainer(config))
                {
                    trainer.initialize(input);
                    final TrainingResult result = train(trainer, data.setSampling(sampler).build(), epochs, -1, -1, 1,
                        -1);
                    finish(model, out, 0, result);
                }
                return;
            }
            try (Communicator comm = Hccl.init())
            {
                final DataParallel ddp = DataParallel.over(comm);
                if (options.containsKey("compression"))
                {
                    final Compression compression = Compression.parse(options.get("compression"));
                    ddp.gradientSync(settings -> settings.compression(compression));
                }
                final DistributedSampler sampler = ddp.sampler(batch, SHUFFLE_SEED);
                final Checkpoints checkpoints = options.containsKey("checkpoints") ?
                    new Checkpoints(comm, Paths.get(options.get("checkpoints")), modelKind) : null;
                final int done = checkpoints == null ? 0 : checkpoints.resume(model);
                sampler.setEpoch(done);
                try (DataParallelTrainer trainer = ddp.newTrainer(model, config))
                {
                    trainer.initialize(input);
                    final ArrayDataset dataset = data.setSampling(sampler).build();
                    TrainingResult result = null;
                    for (int epoch = done; epoch < epochs; epoch++)
                    {
                        final boolean last = comm.rank() == comm.worldSize() - 1;
                        result = train(trainer, dataset, 1, last ? dieAtStep : -1, last ? freezeAtStep : -1,
                            accumulate, epoch);
                        if (checkpoints != null)
                        {
                            checkpoints.save(model, epoch + 1);
                            System.out.println("CHECKPOINT " + (epoch + 1));
                        }
                    }
                    System.out.println("AUTOTUNE trials=" + trainer.gradientSync().autotuneTrials().size() +
                        " steps=" + trainer.gradientSync().steps());
                    finish(model, out, comm.rank(), result);
                }
            }
        }
    }

    /**
     * Trains, as EasyTrain.fit does, with a rank that dies or stops (alive, silent) on a step, and accumulation of K
     * batches a step.
     */
    private static TrainingResult train(
        final Trainer trainer, final ArrayDataset dataset, final int epochs, final int dieAtStep,
        final int freezeAtStep, final int accumulate, final int epochNumber)
        throws Exception
    {
        int step = 0;
        for (int epoch = 0; epoch < epochs; epoch++)
        {
            int pending = 0;
            for (final ai.djl.training.dataset.Batch b : trainer.iterateDataset(dataset))
            {
                if (step == dieAtStep)
                {
                    System.out.println("DYING at step " + step);
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                }
                if (step == freezeAtStep)
                {
                    System.out.println("FREEZING at step " + step);
                    System.out.flush();
                    Thread.sleep(Long.MAX_VALUE);
                }
                if (accumulate == 1)
                {
                    EasyTrain.trainBatch(trainer, b);
                    trainer.step();
                    step++;
                }
                else
                {
                    // Several backward passes add into the gradients; one step applies their (averaged) sum.
                    EasyTrain.trainBatch(trainer, b);
                    if (++pending == accumulate)
                    {
                        trainer.step();
                        pending = 0;
                        step++;
                    }
                }
                b.close();
            }
            trainer.notifyListeners(listener -> listener.onEpoch(trainer));
        }
        if (epochNumber >= 0)
        {
            System.out.println("EPOCH " + epochNumber + " done");
        }
        return trainer.getTrainingResult();
    }

    private static void finish(final Model model, final Path out, final int rank, final TrainingResult result)
        throws IOException
    {
        Files.createDirectories(out);
        try (DataOutputStream dos = new DataOutputStream(Files.newOutputStream(out.resolve("params-" + rank + ".bin"))))
        {
            for (final Pair<String, Parameter> p : model.getBlock().getParameters())
            {
                final NDArray a = p.getValue().getArray();
                final float[] values = a.toFloatArray();
                dos.writeUTF(p.getKey());
                dos.writeInt(values.length);
                final ByteBuffer bytes = ByteBuffer.allocate(values.length * 4);
                bytes.asFloatBuffer().put(values);
                dos.write(bytes.array());
            }
        }
        System.out.println(String.format(Locale.ROOT, "RESULT loss=%.9g accuracy=%.9g", result.getTrainLoss(),
            result.getTrainEvaluation("Accuracy")));
    }

    static Block mlp(final int hidden)
    {
        return new SequentialBlock()
            .add(Linear.builder().setUnits(hidden).build())
            .add(Activation::relu)
            .add(Linear.builder().setUnits(CLASSES).build());
    }

    static Block cnn()
    {
        return new SequentialBlock()
            .add(Conv2d.builder().setKernelShape(new Shape(3, 3)).setFilters(8).optPadding(new Shape(1, 1)).build())
            .add(Activation::relu)
            .add(Pool.maxPool2dBlock(new Shape(2, 2)))
            .add(Blocks.batchFlattenBlock())
            .add(Linear.builder().setUnits(CLASSES).build());
    }

    /**
     * 512 records, the same in every process: for the MLP, 16 features whose class a fixed random linear teacher
     * decides; for the CNN, 8 x 8 images of noise with a bright 2 x 2 spot in the quadrant that is the class.
     */
    static ArrayDataset.Builder data(final NDManager manager, final String kind)
    {
        final SplittableRandom random = new SplittableRandom(DATA_SEED);
        final boolean images = "cnn".equals(kind);
        final int features = images ? 64 : 16;
        final float[] x = new float[RECORDS * features];
        final float[] y = new float[RECORDS];
        final float[][] teacher = new float[CLASSES][features];
        for (final float[] row : teacher)
        {
            for (int f = 0; f < features; f++)
            {
                row[f] = (float)random.nextGaussian();
            }
        }
        for (int r = 0; r < RECORDS; r++)
        {
            for (int f = 0; f < features; f++)
            {
                x[r * features + f] = (float)(images ? 0.5 * random.nextGaussian() : random.nextGaussian());
            }
            y[r] = images ? spot(x, r * features, random) : teacher(teacher, x, r * features);
        }
        final Shape shape = images ? new Shape(RECORDS, 1, 8, 8) : new Shape(RECORDS, features);
        return new ArrayDataset.Builder().setData(manager.create(x, shape)).optLabels(manager.create(y));
    }

    private static int teacher(final float[][] teacher, final float[] x, final int at)
    {
        int best = 0;
        double bestScore = Double.NEGATIVE_INFINITY;
        for (int c = 0; c < CLASSES; c++)
        {
            double score = 0;
            for (int f = 0; f < teacher[c].length; f++)
            {
                score += teacher[c][f] * x[at + f];
            }
            if (score > bestScore)
            {
                bestScore = score;
                best = c;
            }
        }
        return best;
    }

    private static int spot(final float[] x, final int at, final SplittableRandom random)
    {
        final int quadrant = random.nextInt(CLASSES);
        final int top = (quadrant / 2) * 4 + random.nextInt(3);
        final int left = (quadrant % 2) * 4 + random.nextInt(3);
        for (int dy = 0; dy < 2; dy++)
        {
            for (int dx = 0; dx < 2; dx++)
            {
                x[at + (top + dy) * 8 + left + dx] += 2f;
            }
        }
        return quadrant;
    }
}
