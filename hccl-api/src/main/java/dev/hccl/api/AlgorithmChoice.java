package dev.hccl.api;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Which algorithm a communicator runs for an operation of a given size, and why: forced by {@code HCCL_ALGO}, or the
 * cheapest by the cost model, with every candidate's predicted time.
 *
 * @param operation        the operation.
 * @param bytes            the size, as nccl-tests reports it for the operation.
 * @param algorithm        the name of the algorithm that runs, as {@code HCCL_ALGO} spells it.
 * @param forced           whether {@code HCCL_ALGO} named it.
 * @param predictedSeconds each candidate's predicted time, by name, in catalog order; empty when forced.
 * @param model            the layout and link parameters of the prediction, in words.
 */
public record AlgorithmChoice(
    Operation operation, long bytes, String algorithm, boolean forced, Map<String, Double> predictedSeconds,
    String model)
{
    /**
     * Copies the predictions, keeping their order.
     *
     * @param operation        not null.
     * @param bytes            not negative.
     * @param algorithm        not null.
     * @param forced           whether forced.
     * @param predictedSeconds not null.
     * @param model            not null.
     */
    public AlgorithmChoice
    {
        if (operation == null || algorithm == null || predictedSeconds == null || model == null || bytes < 0)
        {
            throw new IllegalArgumentException("operation, algorithm, predictions and model are required");
        }
        predictedSeconds = Collections.unmodifiableMap(new LinkedHashMap<>(predictedSeconds));
    }

    /**
     * One line for logs and {@code hccl-bench}: {@code "hierarchical (cost model: ring 12.3 ms, hierarchical
     * 8.1 ms)"} or {@code "ring (forced by HCCL_ALGO)"}.
     *
     * @return the choice and its reason.
     */
    public String describe()
    {
        if (forced)
        {
            return algorithm + " (forced by HCCL_ALGO)";
        }
        final StringBuilder sb = new StringBuilder(algorithm).append(" (cost model:");
        String separator = " ";
        for (final Map.Entry<String, Double> e : predictedSeconds.entrySet())
        {
            sb.append(separator).append(e.getKey()).append(' ').append(humanTime(e.getValue()));
            separator = ", ";
        }
        return sb.append(')').toString();
    }

    private static String humanTime(final double seconds)
    {
        return seconds >= 1e-3 ? String.format(Locale.ROOT, "%.2f ms", seconds * 1e3) :
            String.format(Locale.ROOT, "%.1f us", seconds * 1e6);
    }
}
