package dev.hccl.bench.step;

import java.util.Arrays;

/**
 * One parameter tensor of a model, and so one gradient: its name as the framework registers it and its shape.
 *
 * @param name  the dotted name, as PyTorch's {@code named_parameters()} gives it.
 * @param shape the dimensions, each at least 1.
 */
public record Parameter(String name, long... shape)
{
    /**
     * @param name  the dotted name.
     * @param shape the dimensions, each at least 1.
     */
    public Parameter
    {
        shape = shape.clone();
        if (shape.length == 0 || Arrays.stream(shape).anyMatch(d -> d < 1))
        {
            throw new IllegalArgumentException("parameter " + name + ": dimensions must be at least 1, got " +
                Arrays.toString(shape));
        }
    }

    @Override
    public long[] shape()
    {
        return shape.clone();
    }

    /**
     * @return the number of elements: the product of the dimensions.
     */
    public long elements()
    {
        return Arrays.stream(shape).reduce(1, Math::multiplyExact);
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof Parameter p && p.name.equals(name) && Arrays.equals(p.shape, shape);
    }

    @Override
    public int hashCode()
    {
        return name.hashCode() * 31 + Arrays.hashCode(shape);
    }

    @Override
    public String toString()
    {
        return name + Arrays.toString(shape);
    }
}
