package dev.hccl.tools.bench;

import dev.hccl.api.DataType;
import dev.hccl.api.ReduceOp;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
     * @param name a type name or {@code all}, in any case.
     * @return the types, in nccl-tests' order.
     * @throws IllegalArgumentException naming the valid values.
     */
    public static List<DataType> types(final String name)
    {
        final String key = name.trim().toLowerCase(Locale.ROOT);
        if (ALL.equals(key))
        {
            return List.copyOf(TYPES.values());
        }
        final DataType type = TYPES.get(key);
        if (type == null)
        {
            throw new IllegalArgumentException("-d: unknown data type '" + name + "'; expected one of " +
                String.join(", ", TYPES.keySet()) + " or all");
        }
        return List.of(type);
    }

    /**
     * The reductions an {@code -o} value names.
     *
     * @param name a reduction name or {@code all}, in any case.
     * @return the reductions, in nccl-tests' order.
     * @throws IllegalArgumentException naming the valid values.
     */
    public static List<ReduceOp> ops(final String name)
    {
        final String key = name.trim().toLowerCase(Locale.ROOT);
        if (ALL.equals(key))
        {
            return List.copyOf(OPS.values());
        }
        final ReduceOp op = OPS.get(key);
        if (op == null)
        {
            throw new IllegalArgumentException("-o: unknown reduction '" + name + "'; expected one of " +
                String.join(", ", OPS.keySet()) + " or all");
        }
        return List.of(op);
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
