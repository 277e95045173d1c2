package dev.hccl.bench.step;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** How a step's gradients are synchronised: the ways the benchmark compares. */
enum StepMode
{
    /** A blocking all-reduce per gradient as the backward pass makes it ready: what naive code does. */
    PER_TENSOR("per-tensor"),
    /** An asynchronous all-reduce per gradient as it is ready, all joined after the backward pass. */
    PER_TENSOR_ASYNC("per-tensor-async"),
    /** {@code GradientSync} with overlap off: the fused buckets all-reduced after the backward pass. */
    BUCKETS("buckets"),
    /** {@code GradientSync} with overlap on: each bucket all-reduced as soon as its gradients are ready. */
    OVERLAP("overlap");

    private final String cliName;

    StepMode(final String cliName)
    {
        this.cliName = cliName;
    }

    /**
     * @return the name on the command line and in the table.
     */
    String cliName()
    {
        return cliName;
    }

    /**
     * @return whether the mode runs through {@code GradientSync}, and so takes a compression.
     */
    boolean fused()
    {
        return this == BUCKETS || this == OVERLAP;
    }

    /**
     * @param name a mode's {@link #cliName()}, in any case.
     * @return the mode.
     * @throws IllegalArgumentException naming the valid ones.
     */
    static StepMode fromName(final String name)
    {
        final String n = name.trim().toLowerCase(Locale.ROOT);
        return Arrays.stream(values()).filter(m -> m.cliName.equals(n)).findFirst().orElseThrow(() ->
            new IllegalArgumentException("unknown mode '" + name + "'; choose from " + names()));
    }

    /**
     * @return every mode's name, in order.
     */
    static List<String> names()
    {
        return Arrays.stream(values()).map(StepMode::cliName).toList();
    }
}
