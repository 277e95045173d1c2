package dev.hccl.bench;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * nccl-tests' names for data types ({@code -d}) and reductions ({@code -o}), in nccl-tests' order, which is the order
 * {@code all} runs them in.
 */
public final class BenchTypes
{
    /** What {@code -d} and {@code -o} accept to mean every type or every reduction. */
    public static final String ALL = "all";

    /** What the redop column shows for operations without a reduction, as nccl-tests. */
    public static final String NONE = "none";

    private static final Map<String, DataType> TYPES = new LinkedHashMap<>();
    private static final Map<String, ReduceOp> OPS = new LinkedHashMap<>();

    static
    {
        // nccl-tests' order, with int16 (which NCCL lacks) beside its siblings; no uint32/uint64 here.
        TYPES.put("int8", DataType.INT8);
        TYPES.put("uint8", DataType.UINT8);
        TYPES.put("int16", DataType.INT16);
        TYPES.put("int32", DataType.INT32);
        TYPES.put("int64", DataType.INT64);
        TYPES.put("half", DataType.FP16);
        TYPES.put("float", DataType.FP32);
        TYPES.put("double", DataType.FP64);
        TYPES.put("bfloat16", DataType.BF16);
        TYPES.put("f8e4m3", DataType.FP8_E4M3);
        TYPES.put("f8e5m2", DataType.FP8_E5M2);
        OPS.put("sum", ReduceOp.SUM);
        OPS.put("prod", ReduceOp.PROD);
        OPS.put("max", ReduceOp.MAX);
        OPS.put("min", ReduceOp.MIN);
        OPS.put("avg", ReduceOp.AVG);
    }

    private BenchTypes()
    {
    }

    /**
     * The types a {@code -d} value names.
     *
     * @param names a type name, a comma-separated list of them (as {@code f8e4m3,f8e5m2}) or {@code all}, in any case.
     * @return the types: in nccl-tests' order for {@code all}, else as listed, each once.
     * @throws IllegalArgumentException naming the valid values.
     */
    public static List<DataType> types(final String names)
    {
        return parse(names, TYPES, "-d", "data type");
    }

    /**
     * The reductions an {@code -o} value names.
     *
     * @param names a reduction name, a comma-separated list of them or {@code all}, in any case.
     * @return the reductions: in nccl-tests' order for {@code all}, else as listed, each once.
     * @throws IllegalArgumentException naming the valid values.
     */
    public static List<ReduceOp> ops(final String names)
    {
        return parse(names, OPS, "-o", "reduction");
    }

    private static <T> List<T> parse(final String names, final Map<String, T> byName, final String flag,
        final String what)
    {
        if (ALL.equals(names.trim().toLowerCase(Locale.ROOT)))
        {
            return List.copyOf(byName.values());
        }
        final Set<T> chosen = new LinkedHashSet<>();
        for (final String name : names.split(",", -1))
        {
            final T value = byName.get(name.trim().toLowerCase(Locale.ROOT));
            if (value == null)
            {
                throw new IllegalArgumentException(flag + ": unknown " + what + " '" + name + "'; expected one of " +
                    String.join(", ", byName.keySet()) + ", a comma-separated list of them, or all");
            }
            chosen.add(value);
        }
        return List.copyOf(chosen);
    }

    /**
     * A type's nccl-tests name.
     *
     * @param type the type, or null for none.
     * @return e.g. {@code float}, or {@code none}.
     */
    public static String name(final DataType type)
    {
        return type == null ? NONE : keyOf(TYPES, type);
    }

    /**
     * A reduction's nccl-tests name.
     *
     * @param op the reduction, or null for none.
     * @return e.g. {@code sum}, or {@code none}.
     */
    public static String name(final ReduceOp op)
    {
        return op == null ? NONE : keyOf(OPS, op);
    }

    private static <T> String keyOf(final Map<String, T> map, final T value)
    {
        return map.entrySet().stream().filter(e -> e.getValue() == value).findFirst().orElseThrow().getKey();
    }
}
