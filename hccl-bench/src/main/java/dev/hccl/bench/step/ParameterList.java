package dev.hccl.bench.step;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds a model's parameter list layer by layer, in registration order, with the shapes PyTorch gives each kind of
 * layer: a convolution's weight is {@code (out, in, k, k)}, a linear layer's {@code (out, in)}, a normalisation
 * layer's weight and bias {@code (features)} each.
 */
final class ParameterList
{
    private final List<Parameter> parameters = new ArrayList<>();

    /**
     * A convolution without bias, as ResNet's are (the batch norm that follows has one).
     */
    ParameterList conv(final String name, final long in, final long out, final long kernel)
    {
        parameters.add(new Parameter(name + ".weight", out, in, kernel, kernel));
        return this;
    }

    /**
     * A batch norm or layer norm: a weight and a bias per feature (running statistics are buffers, not parameters).
     */
    ParameterList norm(final String name, final long features)
    {
        parameters.add(new Parameter(name + ".weight", features));
        parameters.add(new Parameter(name + ".bias", features));
        return this;
    }

    /**
     * A linear layer with bias.
     */
    ParameterList linear(final String name, final long in, final long out)
    {
        parameters.add(new Parameter(name + ".weight", out, in));
        parameters.add(new Parameter(name + ".bias", out));
        return this;
    }

    /**
     * An embedding table: one row of {@code dim} per entry.
     */
    ParameterList embedding(final String name, final long entries, final long dim)
    {
        parameters.add(new Parameter(name + ".weight", entries, dim));
        return this;
    }

    List<Parameter> build()
    {
        return List.copyOf(parameters);
    }
}
