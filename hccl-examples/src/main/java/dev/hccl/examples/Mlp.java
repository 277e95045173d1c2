package dev.hccl.examples;

import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.IntConsumer;

/**
 * A multi-layer perceptron in plain Java, for {@link DataParallelTraining}: fully connected layers with ReLU between
 * them, softmax cross-entropy on the last, trained by SGD with momentum. Its parameters are, in forward order, each
 * layer's weights ({@code out x in}, row-major) then its biases: gradient {@code 2l} is layer {@code l}'s weights,
 * {@code 2l + 1} its biases.
 * <p>
 * The same code serves the data-parallel run and the single-process reference, so that they differ only in how the
 * batch is split and summed. Not thread-safe.
 */
final class Mlp
{
    private static final float MOMENTUM = 0.9f;

    private final int[] dims;
    private final float[][] weights;
    private final float[][] biases;
    private final float[][] velocities;
    /** Per layer: each gradient is summed here, then stored once into its buffer. */
    private final float[][] weightSums;
    private float[][] activations = new float[0][];
    private float[] delta = new float[0];
    private float[] deltaBelow = new float[0];

    /**
     * @param dims the layer widths, input first, classes last; at least two.
     * @param seed the initial weights' seed (He-uniform; biases zero).
     */
    Mlp(final int[] dims, final long seed)
    {
        this.dims = dims.clone();
        final int layers = dims.length - 1;
        this.weights = new float[layers][];
        this.biases = new float[layers][];
        this.velocities = new float[2 * layers][];
        this.weightSums = new float[layers][];
        final SplittableRandom random = new SplittableRandom(seed);
        for (int l = 0; l < layers; l++)
        {
            final float bound = (float)Math.sqrt(6.0 / dims[l]);
            weights[l] = new float[dims[l + 1] * dims[l]];
            for (int j = 0; j < weights[l].length; j++)
            {
                weights[l][j] = (float)((random.nextDouble() * 2 - 1) * bound);
            }
            biases[l] = new float[dims[l + 1]];
            velocities[2 * l] = new float[weights[l].length];
            velocities[2 * l + 1] = new float[biases[l].length];
            weightSums[l] = new float[weights[l].length];
        }
    }

    /**
     * @return each gradient's element count, in registration (forward) order: weights, biases, layer by layer.
     */
    long[] gradientCounts()
    {
        final long[] counts = new long[2 * weights.length];
        for (int l = 0; l < weights.length; l++)
        {
            counts[2 * l] = weights[l].length;
            counts[2 * l + 1] = biases[l].length;
        }
        return counts;
    }

    /**
     * @param p a parameter, in registration order.
     * @return its values (the model's own array).
     */
    float[] parameter(final int p)
    {
        return p % 2 == 0 ? weights[p / 2] : biases[p / 2];
    }

    /**
     * Forward and backward over {@code count} samples: leaves in {@code gradients} the gradient of the mean loss over
     * those samples, and calls {@code ready} with each gradient's index as soon as it is stored, last layer first.
     *
     * @param inputs    the dataset's inputs, {@code dims[0]} floats a sample.
     * @param labels    the dataset's classes.
     * @param order     sample indices; the batch is {@code order[from .. from + count)}.
     * @param from      the first.
     * @param count     samples, at least 1.
     * @param gradients one FP32 buffer per gradient, registration order, at least its element count from index 0.
     * @param ready     told each gradient as it is complete.
     * @return the mean loss over the samples.
     */
    float forwardBackward(
        final float[] inputs, final int[] labels, final int[] order, final int from, final int count,
        final FloatBuffer[] gradients, final IntConsumer ready)
    {
        final int layers = weights.length;
        ensureScratch(count);
        final float[] input = activations[0];
        for (int b = 0; b < count; b++)
        {
            System.arraycopy(inputs, order[from + b] * dims[0], input, b * dims[0], dims[0]);
        }
        for (int l = 0; l < layers; l++)
        {
            dense(l, activations[l], activations[l + 1], count, l < layers - 1);
        }
        final float loss = softmaxCrossEntropy(activations[layers], labels, order, from, count);
        for (int l = layers - 1; l >= 0; l--)
        {
            storeGradients(l, count, gradients);
            ready.accept(2 * l + 1);
            ready.accept(2 * l);
            if (l > 0)
            {
                propagate(l, count);
            }
        }
        return loss;
    }

    /**
     * One SGD step with momentum: {@code v = MOMENTUM v + g; w -= rate v}.
     *
     * @param gradients the (reduced) gradients, registration order.
     * @param rate      the learning rate.
     */
    void update(final FloatBuffer[] gradients, final float rate)
    {
        for (int p = 0; p < velocities.length; p++)
        {
            final float[] w = parameter(p);
            final float[] v = velocities[p];
            final FloatBuffer g = gradients[p];
            for (int j = 0; j < w.length; j++)
            {
                v[j] = MOMENTUM * v[j] + g.get(j);
                w[j] -= rate * v[j];
            }
        }
    }

    private void ensureScratch(final int count)
    {
        if (activations.length > 0 && activations[0].length >= count * dims[0])
        {
            return;
        }
        activations = new float[dims.length][];
        int widest = 0;
        for (int l = 0; l < dims.length; l++)
        {
            activations[l] = new float[count * dims[l]];
            widest = Math.max(widest, dims[l]);
        }
        delta = new float[count * widest];
        deltaBelow = new float[count * widest];
    }

    /** {@code out = in W^T + b}, then ReLU when {@code relu}. */
    private void dense(final int l, final float[] in, final float[] out, final int count, final boolean relu)
    {
        final int nIn = dims[l];
        final int nOut = dims[l + 1];
        final float[] w = weights[l];
        final float[] bias = biases[l];
        for (int b = 0; b < count; b++)
        {
            for (int o = 0; o < nOut; o++)
            {
                float sum = bias[o];
                for (int i = 0; i < nIn; i++)
                {
                    sum += in[b * nIn + i] * w[o * nIn + i];
                }
                out[b * nOut + o] = relu && sum < 0 ? 0 : sum;
            }
        }
    }

    /** Returns the mean loss and leaves in {@code delta} its gradient with respect to the logits. */
    private float softmaxCrossEntropy(
        final float[] logits, final int[] labels, final int[] order, final int from, final int count)
    {
        final int classes = dims[dims.length - 1];
        double loss = 0;
        for (int b = 0; b < count; b++)
        {
            float max = Float.NEGATIVE_INFINITY;
            for (int c = 0; c < classes; c++)
            {
                max = Math.max(max, logits[b * classes + c]);
            }
            float total = 0;
            for (int c = 0; c < classes; c++)
            {
                final float e = (float)Math.exp(logits[b * classes + c] - max);
                delta[b * classes + c] = e;
                total += e;
            }
            final int label = labels[order[from + b]];
            for (int c = 0; c < classes; c++)
            {
                delta[b * classes + c] = (delta[b * classes + c] / total - (c == label ? 1 : 0)) / count;
            }
            loss += Math.log(total) - (logits[b * classes + label] - max);
        }
        return (float)(loss / count);
    }

    /** Layer {@code l}'s weight and bias gradients from {@code delta}, stored into their buffers. */
    private void storeGradients(final int l, final int count, final FloatBuffer[] gradients)
    {
        final int nIn = dims[l];
        final int nOut = dims[l + 1];
        final float[] in = activations[l];
        final float[] sum = weightSums[l];
        Arrays.fill(sum, 0);
        final FloatBuffer biasGradient = gradients[2 * l + 1];
        for (int o = 0; o < nOut; o++)
        {
            float s = 0;
            for (int b = 0; b < count; b++)
            {
                s += delta[b * nOut + o];
            }
            biasGradient.put(o, s);
        }
        for (int b = 0; b < count; b++)
        {
            for (int o = 0; o < nOut; o++)
            {
                final float d = delta[b * nOut + o];
                final int row = o * nIn;
                for (int i = 0; i < nIn; i++)
                {
                    sum[row + i] += d * in[b * nIn + i];
                }
            }
        }
        gradients[2 * l].put(0, sum);
    }

    /** {@code delta} of layer {@code l - 1}'s output: {@code delta W}, through the ReLU. */
    private void propagate(final int l, final int count)
    {
        final int nIn = dims[l];
        final int nOut = dims[l + 1];
        final float[] w = weights[l];
        final float[] below = activations[l];
        Arrays.fill(deltaBelow, 0, count * nIn, 0);
        for (int b = 0; b < count; b++)
        {
            for (int o = 0; o < nOut; o++)
            {
                final float d = delta[b * nOut + o];
                for (int i = 0; i < nIn; i++)
                {
                    deltaBelow[b * nIn + i] += d * w[o * nIn + i];
                }
            }
            for (int i = 0; i < nIn; i++)
            {
                if (below[b * nIn + i] <= 0)
                {
                    deltaBelow[b * nIn + i] = 0;
                }
            }
        }
        final float[] swap = delta;
        delta = deltaBelow;
        deltaBelow = swap;
    }
}
