package com.example;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Blocks;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.core.Linear;
import ai.djl.nn.pooling.Pool;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.EasyTrain;
import ai.djl.training.TrainingResult;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.Batch;
import ai.djl.training.evaluator.Accuracy;
import ai.djl.training.listener.EvaluatorTrainingListener;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import dev.hccl.api.Communicator;
import dev.hccl.api.Hccl;
import dev.hccl.djl.Checkpoints;
import dev.hccl.djl.DataParallel;
import dev.hccl.djl.DataParallelTrainer;
import dev.hccl.djl.DistributedSampler;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;

/**
 * Trains a small CNN on {@link Shapes} (6,000 training images, 1,000 held out) data-parallel with hccl-java: each rank
 * takes its shard of every global batch, the gradients are averaged across the ranks each step, and rank 0 prints
 * each epoch's loss and accuracy (the mean over the ranks) and the images per second of the whole job.
 * <pre>
 * bin/hcclrun -np 4 java -cp 'examples/djl-training/target/classes:examples/djl-training/target/dependency/*' \
 *     com.example.ShapesTraining [EPOCHS] [BATCH_PER_RANK] [CHECKPOINT_DIR]
 * </pre>
 * With a checkpoint directory, rank 0 saves the model after each epoch and a restarted job resumes from the newest.
 */
public final class ShapesTraining
{
    private ShapesTraining()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final int epochs = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        final int batch = args.length > 1 ? Integer.parseInt(args[1]) : 32;
        final Path checkpointDir = args.length > 2 ? Paths.get(args[2]) : null;
        Engine.getInstance().setRandomSeed(1);

        try (Communicator comm = Hccl.init();
             NDManager manager = NDManager.newBaseManager(Device.cpu());
             Model model = Model.newInstance("shapes-cnn", Device.cpu()))
        {
            model.setBlock(new SequentialBlock()
                .add(Conv2d.builder().setKernelShape(new Shape(3, 3)).setFilters(16).optPadding(new Shape(1, 1)).build())
                .add(Activation::relu)
                .add(Pool.maxPool2dBlock(new Shape(2, 2)))
                .add(Conv2d.builder().setKernelShape(new Shape(3, 3)).setFilters(32).optPadding(new Shape(1, 1)).build())
                .add(Activation::relu)
                .add(Pool.maxPool2dBlock(new Shape(2, 2)))
                .add(Blocks.batchFlattenBlock())
                .add(Linear.builder().setUnits(64).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(Shapes.CLASSES).build()));

            final DataParallel ddp = DataParallel.over(comm);
            final DistributedSampler sampler = ddp.sampler(batch, 42);
            final ArrayDataset train = dataset(manager, Shapes.generate(6000, 1), sampler);
            final ArrayDataset test = dataset(manager, Shapes.generate(1000, 2),
                new DistributedSampler(batch, false, 0, comm.rank(), comm.worldSize()));

            final DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                .optOptimizer(Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.05f)).optMomentum(0.9f).build())
                .optDevices(new Device[] {Device.cpu()})
                .addEvaluator(new Accuracy())
                .addTrainingListeners(new EvaluatorTrainingListener());

            final Checkpoints checkpoints = checkpointDir == null ? null :
                new Checkpoints(comm, checkpointDir, "shapes-cnn");
            final int done = checkpoints == null ? 0 : checkpoints.resume(model);
            sampler.setEpoch(done);
            if (comm.rank() == 0)
            {
                System.out.printf(Locale.ROOT, "%d ranks, batch %d per rank (%d in all), %d epochs%s%n",
                    comm.worldSize(), batch, batch * comm.worldSize(), epochs,
                    done > 0 ? ", resumed after epoch " + done : "");
            }
            try (DataParallelTrainer trainer = ddp.newTrainer(model, config))
            {
                trainer.initialize(new Shape(batch, 1, Shapes.SIDE, Shapes.SIDE));
                for (int epoch = done; epoch < epochs; epoch++)
                {
                    // EasyTrain.fit(trainer, 1, train, test), with the training alone timed.
                    final long start = System.nanoTime();
                    for (final Batch b : trainer.iterateDataset(train))
                    {
                        EasyTrain.trainBatch(trainer, b);
                        trainer.step();
                        b.close();
                    }
                    final double seconds = (System.nanoTime() - start) / 1e9;
                    EasyTrain.evaluateDataset(trainer, test);
                    trainer.notifyListeners(listener -> listener.onEpoch(trainer));
                    final TrainingResult result = trainer.getTrainingResult();
                    if (checkpoints != null)
                    {
                        checkpoints.save(model, epoch + 1);
                    }
                    if (comm.rank() == 0)
                    {
                        // The images every rank trained on this epoch (padded shards), over the training's time.
                        final long images = (long)Math.ceil(6000.0 / comm.worldSize()) * comm.worldSize();
                        System.out.printf(Locale.ROOT,
                            "epoch %d: loss %.4f, accuracy %.2f%%, held out %.2f%%, %.0f images/s%n", epoch + 1,
                            result.getTrainLoss(), 100 * result.getTrainEvaluation("Accuracy"),
                            100 * result.getValidateEvaluation("Accuracy"), images / seconds);
                    }
                }
            }
        }
    }

    private static ArrayDataset dataset(final NDManager manager, final Shapes shapes, final DistributedSampler sampler)
    {
        return new ArrayDataset.Builder()
            .setData(manager.create(shapes.images, new Shape(shapes.count, 1, Shapes.SIDE, Shapes.SIDE)))
            .optLabels(manager.create(shapes.labels))
            .setSampling(sampler)
            .build();
    }
}
