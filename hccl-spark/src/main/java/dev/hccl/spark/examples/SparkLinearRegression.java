package dev.hccl.spark.examples;

import dev.hccl.api.Communicator;
import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;
import dev.hccl.spark.SparkHccl;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Data-parallel training over a Spark {@link Dataset}'s partitions: linear least squares by full-batch gradient
 * descent, one rank a partition in a barrier stage ({@link SparkHccl}). Each step every rank sums the gradient of its
 * rows, one {@code allReduce} adds the sums up over the ranks, and every rank takes the same step, so the models stay
 * identical. (Models with many tensors in FP32 or half precision overlap those all-reduces with the backward pass
 * through {@code dev.hccl.training.GradientSync}, as on any other launcher.) The driver trains the same model on all rows in one process (the reference)
 * and the example succeeds when the two agree to within {@link #TOLERANCE}, relative to the largest weight: only the
 * order of the additions differs.
 * <p>
 * {@code spark-submit --class dev.hccl.spark.examples.SparkLinearRegression --jars hccl-shaded.jar hccl-spark.jar
 * [partitions] [steps]}: see docs/DEPLOY.md for the JVM options. Exit status 0 when the models agree, 1 when not.
 */
public final class SparkLinearRegression
{
    /** Largest difference of a weight from the reference's, relative to the largest weight. */
    public static final double TOLERANCE = 1e-9;
    /** Rows of the synthetic dataset. */
    public static final int SAMPLES = 8192;
    /** Features of a row. */
    public static final int FEATURES = 8;
    private static final double RATE = 0.1;

    /**
     * A trained model: the weights, then the bias.
     *
     * @param coefficients the weights and, last, the bias.
     * @param loss         the mean squared error over all rows, before the last step.
     */
    public record Model(double[] coefficients, double loss) implements Serializable
    {
    }

    private SparkLinearRegression()
    {
    }

    /**
     * Trains on the cluster and in the driver, prints both and exits 0 when they agree.
     *
     * @param args {@code [partitions] [steps]}: partitions default to Spark's default parallelism, steps to 50.
     */
    public static void main(final String[] args)
    {
        final SparkSession spark = SparkSession.builder().appName("hccl-spark linear regression").getOrCreate();
        final int status;
        try
        {
            final int partitions = args.length > 0 ? Integer.parseInt(args[0]) :
                spark.sparkContext().defaultParallelism();
            final int steps = args.length > 1 ? Integer.parseInt(args[1]) : 50;
            status = run(spark, partitions, steps) <= TOLERANCE ? 0 : 1;
        }
        finally
        {
            spark.stop();
        }
        System.exit(status);
    }

    /**
     * Trains on {@code partitions} ranks and in the driver, and prints both.
     *
     * @param spark      the session.
     * @param partitions ranks; the cluster needs as many free task slots.
     * @param steps      gradient steps.
     * @return the largest difference of a weight from the reference's, relative to the largest weight.
     */
    public static double run(final SparkSession spark, final int partitions, final int steps)
    {
        final Dataset<Row> data = dataset(spark, SAMPLES, FEATURES, 1).repartition(partitions);
        final Model distributed = train(data, steps);
        final Model reference = trainLocally(data.collectAsList(), steps);
        final double difference = relativeDifference(distributed.coefficients(), reference.coefficients());
        System.out.printf(Locale.ROOT, "%d ranks, %d steps: loss %.6f, reference %.6f, largest relative weight " +
            "difference %.3g (%s %.0g)%n", partitions, steps, distributed.loss(), reference.loss(), difference,
            difference <= TOLERANCE ? "within" : "OUTSIDE", TOLERANCE);
        return difference;
    }

    /**
     * A synthetic regression dataset: {@code y = w . x + b + noise}, features uniform in [-1, 1).
     *
     * @param spark    the session.
     * @param samples  rows.
     * @param features features a row: columns {@code x0, x1, ...} after {@code y}.
     * @param seed     the seed.
     * @return the dataset.
     */
    public static Dataset<Row> dataset(final SparkSession spark, final int samples, final int features,
        final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final double[] truth = random.doubles(features + 1, -2, 2).toArray();
        final List<Row> rows = new ArrayList<>(samples);
        for (int i = 0; i < samples; i++)
        {
            final Object[] values = new Object[features + 1];
            double y = truth[features];
            for (int j = 0; j < features; j++)
            {
                final double x = random.nextDouble(-1, 1);
                values[j + 1] = x;
                y += truth[j] * x;
            }
            values[0] = y + 0.1 * random.nextGaussian();
            rows.add(RowFactory.create(values));
        }
        final List<StructField> fields = new ArrayList<>();
        fields.add(DataTypes.createStructField("y", DataTypes.DoubleType, false));
        for (int j = 0; j < features; j++)
        {
            fields.add(DataTypes.createStructField("x" + j, DataTypes.DoubleType, false));
        }
        return spark.createDataFrame(rows, new StructType(fields.toArray(new StructField[0])));
    }

    /**
     * Trains data-parallel: one rank a partition, in one barrier stage.
     *
     * @param data  the dataset, {@code y} then the features.
     * @param steps gradient steps.
     * @return rank 0's model (every rank's is the same).
     */
    public static Model train(final Dataset<Row> data, final int steps)
    {
        final int features = data.columns().length - 1;
        final List<Model> models = SparkHccl.mapPartitions(data.toJavaRDD(), (ctx, rows) ->
        {
            final double[][] shard = rowsOf(rows, features);
            try (Communicator comm = SparkHccl.init(ctx))
            {
                final Model model = trainShard(comm, shard, features, steps);
                return comm.rank() == 0 ? List.of(model).iterator() : Collections.emptyIterator();
            }
        }).collect();
        return models.get(0);
    }

    /**
     * One rank's part: each step, this shard's sums ({@link #gradientSums}) added up over the ranks with one
     * {@code allReduce} in FP64, so that the model differs from one process's only by the order of the additions.
     *
     * @param comm     the communicator.
     * @param shard    this rank's rows: {@code y} then the features.
     * @param features features a row.
     * @param steps    gradient steps.
     * @return the model, the same on every rank.
     */
    static Model trainShard(final Communicator comm, final double[][] shard, final int features, final int steps)
    {
        final ByteBuffer count = ByteBuffer.allocateDirect(Double.BYTES).order(ByteOrder.nativeOrder());
        count.putDouble(0, shard.length);
        comm.allReduce(count, count, 1, DataType.FP64, ReduceOp.SUM);
        final double total = count.getDouble(0);
        final ByteBuffer sums = ByteBuffer.allocateDirect((features + 2) * Double.BYTES).order(ByteOrder.nativeOrder());
        final double[] coefficients = new double[features + 1];
        double loss = Double.NaN;
        for (int step = 0; step < steps; step++)
        {
            final double[] local = gradientSums(shard, coefficients);
            sums.asDoubleBuffer().put(local);
            comm.allReduce(sums, sums, features + 2, DataType.FP64, ReduceOp.SUM);
            for (int j = 0; j <= features; j++)
            {
                coefficients[j] -= RATE * 2 * sums.getDouble(j * Double.BYTES) / total;
            }
            loss = sums.getDouble((features + 1) * Double.BYTES) / total;
        }
        return new Model(coefficients, loss);
    }

    /**
     * The same training on all rows in one process.
     *
     * @param rows  every row.
     * @param steps gradient steps.
     * @return the model.
     */
    public static Model trainLocally(final List<Row> rows, final int steps)
    {
        final int features = rows.get(0).length() - 1;
        final double[][] all = rowsOf(rows.iterator(), features);
        final double[] coefficients = new double[features + 1];
        double loss = Double.NaN;
        for (int step = 0; step < steps; step++)
        {
            final double[] sums = gradientSums(all, coefficients);
            for (int j = 0; j <= features; j++)
            {
                coefficients[j] -= RATE * 2 * sums[j] / all.length;
            }
            loss = sums[features + 1] / all.length;
        }
        return new Model(coefficients, loss);
    }

    /**
     * Sums over the rows of the residual times each feature, of the residual (the bias), and of its square.
     *
     * @param rows         {@code y} then the features.
     * @param coefficients the weights, then the bias.
     * @return {@code features + 2} sums.
     */
    private static double[] gradientSums(final double[][] rows, final double[] coefficients)
    {
        final int features = coefficients.length - 1;
        final double[] sums = new double[features + 2];
        for (final double[] row : rows)
        {
            double residual = coefficients[features] - row[0];
            for (int j = 0; j < features; j++)
            {
                residual += coefficients[j] * row[j + 1];
            }
            for (int j = 0; j < features; j++)
            {
                sums[j] += residual * row[j + 1];
            }
            sums[features] += residual;
            sums[features + 1] += residual * residual;
        }
        return sums;
    }

    private static double[][] rowsOf(final Iterator<Row> rows, final int features)
    {
        final List<double[]> out = new ArrayList<>();
        while (rows.hasNext())
        {
            final Row row = rows.next();
            final double[] values = new double[features + 1];
            for (int j = 0; j <= features; j++)
            {
                values[j] = row.getDouble(j);
            }
            out.add(values);
        }
        return out.toArray(new double[0][]);
    }

    /**
     * The largest difference of a coefficient, relative to the largest coefficient of the reference.
     *
     * @param got       the coefficients.
     * @param reference the reference's.
     * @return the difference.
     */
    public static double relativeDifference(final double[] got, final double[] reference)
    {
        double scale = 0;
        double worst = 0;
        for (int j = 0; j < reference.length; j++)
        {
            scale = Math.max(scale, Math.abs(reference[j]));
            worst = Math.max(worst, Math.abs(got[j] - reference[j]));
        }
        return worst / scale;
    }
}
